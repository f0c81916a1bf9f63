using System.ComponentModel;
using System.Diagnostics;
using System.Runtime.ExceptionServices;
using System.Text;

namespace Camdoop.MapReduce.Jobs;

/// <summary>
/// Runs one program of a streaming job as a child process: its standard input written by a thread of its own, its
/// standard output read as record lines (<see cref="StreamingLines"/>) on the calling thread, its standard error kept
/// for the first line. Blocks until the program exits, so it runs where map work runs, never on a node's event loop.
/// A program that cannot start, exits with a non-zero code, stops reading its input early or writes a line that is
/// not a record fails with a <see cref="StreamingCommandException"/> whose one line names it.
/// </summary>
public static class StreamingProcess
{
    private const int ReadBytes = 64 * 1024;

    // Most of a standard error line that an error message quotes.
    private const int QuotedErrorChars = 200;

    /// <summary>
    /// Runs <paramref name="command"/>: <paramref name="feed"/> writes its input (on another thread, into a buffered
    /// stream it must not close), and every line it writes goes to <paramref name="output"/> as a record (on this thread).
    /// </summary>
    public static void Run(StreamingCommand command, Action<Stream> feed, IRecordEmitter output)
    {
        ArgumentNullException.ThrowIfNull(command);
        ArgumentNullException.ThrowIfNull(feed);
        ArgumentNullException.ThrowIfNull(output);
        using var process = Start(command);
        var firstError = new FirstLine();
        process.ErrorDataReceived += (_, e) => firstError.Offer(e.Data);
        process.BeginErrorReadLine();
        var input = new ProgramInput(process.StandardInput);
        Exception? feedError = null;
        var feeder = new Thread(() =>
        {
            try
            {
                feed(input);
                input.Flush();
            }
            catch (ProgramInput.ClosedException)
            {
                // The program stopped reading; it is judged by how it exits.
            }
            // whatever stops the input (an unreadable input file, a line over the limit) fails the program's run
            catch (Exception e)
            {
                feedError = e;
                Kill(process);
            }
            finally
            {
                input.Close();
            }
        })
        {
            IsBackground = true,
            Name = $"streaming {command.Role} input",
        };
        feeder.Start();
        try
        {
            ReadRecords(command, process.StandardOutput.BaseStream, output);
        }
        catch
        {
            Kill(process);
            feeder.Join();
            throw;
        }
        process.WaitForExit();
        feeder.Join();
        if (feedError is not null)
        {
            ExceptionDispatchInfo.Throw(feedError);
        }
        if (process.ExitCode != 0)
        {
            string? line = firstError.Line;
            throw new StreamingCommandException(
                $"{command} exited with code {process.ExitCode}" + (line is null ? " (nothing on its standard error)" : $": {line}"));
        }
        if (input.Refused)
        {
            throw new StreamingCommandException($"{command} exited before reading all of its input");
        }
    }

    private static Process Start(StreamingCommand command)
    {
        var start = new ProcessStartInfo(command.Path)
        {
            UseShellExecute = false,
            RedirectStandardInput = true,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            // Beside the program: a script finds the files it ships with.
            WorkingDirectory = Path.GetDirectoryName(command.Path) ?? "/",
        };
        try
        {
            return Process.Start(start) ?? throw new StreamingCommandException($"{command} could not be started");
        }
        catch (Win32Exception e)
        {
            string reason = e.NativeErrorCode switch
            {
                2 => "it, or the interpreter its #! line names, does not exist",
                8 => "it is neither a program this machine runs nor a script with a #! line",
                13 => "permission denied (it must be executable: chmod +x)",
                _ => new Win32Exception(e.NativeErrorCode).Message,
            };
            throw new StreamingCommandException($"{command} could not be started: {reason}", e);
        }
    }

    /// <summary>Reads the program's output to its end, line by line, emitting each as a record.</summary>
    private static void ReadRecords(StreamingCommand command, Stream stdout, IRecordEmitter output)
    {
        var buffer = new byte[ReadBytes];
        int start = 0, end = 0, scanned = 0;
        long lines = 0;
        bool ended = false;
        while (true)
        {
            int newline = buffer.AsSpan(scanned, end - scanned).IndexOf((byte)'\n');
            if (newline >= 0)
            {
                Emit(command, buffer.AsSpan(start, scanned + newline - start), ++lines, output);
                start = scanned = scanned + newline + 1;
                continue;
            }
            scanned = end;
            if (ended)
            {
                if (end > start)
                {
                    Emit(command, buffer.AsSpan(start, end - start), ++lines, output); // a last line without its newline
                }
                return;
            }
            if (end - start > StreamingLines.MaxLineBytes)
            {
                throw new StreamingCommandException(
                    $"{command} wrote a line of more than {StreamingLines.MaxLineBytes} bytes (output line {lines + 1}): "
                  + "a line is one record, a key and a value within the record limits");
            }
            if (start > 0)
            {
                buffer.AsSpan(start, end - start).CopyTo(buffer);
                end -= start;
                scanned -= start;
                start = 0;
            }
            if (end == buffer.Length)
            {
                Array.Resize(ref buffer, Math.Min(buffer.Length * 2, StreamingLines.MaxLineBytes + 1));
            }
            int read = stdout.Read(buffer, end, buffer.Length - end);
            if (read == 0)
            {
                ended = true;
            }
            end += read;
        }
    }

    private static void Emit(StreamingCommand command, ReadOnlySpan<byte> line, long number, IRecordEmitter output)
    {
        if (StreamingLines.Split(line, out var key, out var value) is { } problem)
        {
            throw new StreamingCommandException($"{command} wrote {problem} (output line {number})");
        }
        output.Emit(key, value);
    }

    private static void Kill(Process process)
    {
        try
        {
            process.Kill(entireProcessTree: true);
        }
        catch (InvalidOperationException)
        {
            // It has exited already.
        }
    }

    /// <summary>The first non-empty line of the program's standard error, cut short and without control characters.</summary>
    private sealed class FirstLine
    {
        private readonly Lock _lock = new();
        private string? _line;

        public string? Line
        {
            get
            {
                lock (_lock)
                {
                    return _line;
                }
            }
        }

        public void Offer(string? line)
        {
            if (string.IsNullOrWhiteSpace(line))
            {
                return;
            }
            lock (_lock)
            {
                if (_line is not null)
                {
                    return;
                }
                var text = new StringBuilder();
                foreach (char c in line.Trim())
                {
                    text.Append(char.IsControl(c) ? ' ' : c);
                    if (text.Length == QuotedErrorChars)
                    {
                        text.Append("...");
                        break;
                    }
                }
                _line = text.ToString();
            }
        }
    }

    /// <summary>
    /// The program's standard input. A write the pipe refuses (the program closed it or exited) is told apart from
    /// every other failure of the feed, such as its own input being unreadable.
    /// </summary>
    private sealed class ProgramInput(StreamWriter pipe) : Stream
    {
        // Never disposed: closing the pipe is the process's writer's to do.
        private readonly BufferedStream _buffered = new(pipe.BaseStream, ReadBytes);

        /// <summary>Whether the program stopped taking its input before all of it was written.</summary>
        public bool Refused { get; private set; }

        public override bool CanRead => false;

        public override bool CanSeek => false;

        public override bool CanWrite => true;

        public override long Length => throw new NotSupportedException();

        public override long Position
        {
            get => throw new NotSupportedException();
            set => throw new NotSupportedException();
        }

        public override void Write(byte[] buffer, int offset, int count) => Write(buffer.AsSpan(offset, count));

        public override void Write(ReadOnlySpan<byte> buffer) => Guard(buffer, static (stream, bytes) => stream.Write(bytes));

        public override void WriteByte(byte value)
        {
            Span<byte> one = [value];
            Write(one);
        }

        public override void Flush() => Guard([], static (stream, _) => stream.Flush());

        public override int Read(byte[] buffer, int offset, int count) => throw new NotSupportedException();

        public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

        public override void SetLength(long value) => throw new NotSupportedException();

        protected override void Dispose(bool disposing)
        {
            if (disposing)
            {
                try
                {
                    _buffered.Flush();
                }
                catch (IOException)
                {
                    Refused = true;
                }
                try
                {
                    pipe.Close();
                }
                catch (IOException)
                {
                    Refused = true;
                }
            }
            base.Dispose(disposing);
        }

        private void Guard(ReadOnlySpan<byte> bytes, WriteAction action)
        {
            try
            {
                action(_buffered, bytes);
            }
            catch (IOException e)
            {
                Refused = true;
                throw new ClosedException(e);
            }
        }

        private delegate void WriteAction(Stream stream, ReadOnlySpan<byte> bytes);

        /// <summary>The program refused its input.</summary>
        public sealed class ClosedException(Exception inner) : Exception("the program closed its input", inner);
    }
}
