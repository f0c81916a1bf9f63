using Camdoop.MapReduce.Jobs;
using Camdoop.MapReduce.MapPhase;
using Camdoop.Records;
using Camdoop.Runtime.Node;

namespace Camdoop.MapReduce.Service;

/// <summary>
/// A streaming job's reduce task once its root holds all of its records. The root reducer (the tree shuffle's or the
/// stream shuffle's) merges the records into a file as it does any job's output, <c>key TAB value</c> lines sorted by
/// key, which is the reducer program's input as Hadoop Streaming gives it; then the program runs over that file off
/// the event loop (<see cref="INodeContext.RunOffLoop"/>, where map tasks run), and its lines become the reduce task's
/// output, counted, checksummed and formatted as any job's are. The program never holds up the loop, at the price of
/// starting only when the shuffle of its reduce task has ended.
/// </summary>
internal static class StreamingReduce
{
    private const int ChunkBytes = 64 * 1024;

    /// <summary>The file of reduce task <paramref name="reduceTask"/>'s records that its reducer program reads.</summary>
    public static string InputPath(string dataDirectory, ulong jobId, int reduceTask) =>
        Path.Combine(RunFileLayout.JobDirectory(dataDirectory, jobId), "reduce-input", ReduceOutput.PartName(reduceTask));

    /// <summary>
    /// Runs the reducer program over <paramref name="input"/> off the loop, then on it calls <paramref name="done"/> with
    /// the output (written to <paramref name="outputPath"/>, or only counted when that is null), or
    /// <paramref name="failed"/> with one line saying why there is none. The input file goes either way.
    /// </summary>
    public static void Start(INodeContext context, StreamingJob job, string input, string? outputPath, Action<ReduceOutput> done, Action<string> failed)
    {
        ReduceOutput? output = null;
        string? error = null;
        context.RunOffLoop(
            () =>
            {
                try
                {
                    output = Run(job, input, outputPath);
                }
                catch (StreamingCommandException e)
                {
                    error = e.Message;
                }
                // a disk that fails the output, or a bug, fails the job on this server, never the server
                catch (Exception e)
                {
                    error = $"{job.Reducer}: {e.GetType().Name}: {e.Message}";
                }
            },
            () =>
            {
                if (output is not null)
                {
                    done(output);
                }
                else
                {
                    failed(error ?? $"{job.Reducer} did not run");
                }
            });
    }

    /// <summary>Runs the reducer program over <paramref name="input"/> where it is called; deletes the input.</summary>
    public static ReduceOutput Run(StreamingJob job, string input, string? outputPath)
    {
        ArgumentNullException.ThrowIfNull(job);
        var output = new ReduceOutput(job, outputPath);
        try
        {
            var records = new EncodedRecords(output);
            StreamingProcess.Run(job.Reducer, stdin =>
            {
                using var file = new FileStream(input, FileMode.Open, FileAccess.Read, FileShare.Read, 1, FileOptions.SequentialScan);
                file.CopyTo(stdin, ChunkBytes);
            }, records);
            records.Flush();
            output.Complete();
            return output;
        }
        catch
        {
            output.Dispose();
            throw;
        }
        finally
        {
            File.Delete(input);
        }
    }

    /// <summary>The program's records, encoded into the record stream an output takes, a chunk at a time.</summary>
    private sealed class EncodedRecords(ReduceOutput output) : IRecordEmitter
    {
        private readonly byte[] _chunk = new byte[ChunkBytes];
        private byte[] _large = [];
        private int _length;

        public void Emit(ReadOnlySpan<byte> key, ReadOnlySpan<byte> value)
        {
            int length = RecordCodec.EncodedLength(key.Length, value.Length);
            if (_length + length > _chunk.Length)
            {
                Flush();
            }
            if (length > _chunk.Length)
            {
                if (_large.Length < length)
                {
                    _large = new byte[length];
                }
                output.Write(_large.AsSpan(0, RecordCodec.Write(_large, key, value)));
                return;
            }
            _length += RecordCodec.Write(_chunk.AsSpan(_length), key, value);
        }

        public void Flush()
        {
            output.Write(_chunk.AsSpan(0, _length));
            _length = 0;
        }
    }
}
