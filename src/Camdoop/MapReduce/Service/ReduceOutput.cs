using System.Buffers;
using System.Globalization;
using Camdoop.MapReduce.Jobs;
using Camdoop.MapReduce.Jobs.Control;
using Camdoop.MapReduce.Shuffle;
using Camdoop.Records;

namespace Camdoop.MapReduce.Service;

/// <summary>
/// Where a root reducer's output records go while the shuffle is still running: formatted by the job into
/// part-NNNNN (key TAB value lines for text jobs, raw records for sort), or, for <see cref="OutputKind.Discard"/>,
/// only counted (the paper's simulator runs do not write output, §5.2). Either way it counts records and logical
/// bytes and checksums the record stream, so runs can be compared without files.
/// <para>
/// An output replica (<see cref="ForReplica"/>) takes the stream a root reducer replicates to it and applies it one
/// key group at a time: the file, counters and checksum only ever hold whole groups, so the replica can take the
/// reduce task over after the last key it holds (<see cref="TakeOver"/>).
/// </para>
/// </summary>
public sealed class ReduceOutput : IDisposable
{
    private const int FlushBytes = 256 * 1024;

    private readonly IMapReduceJob _job;
    private readonly FileStream? _file;
    private readonly ArrayBufferWriter<byte>? _formatted;
    private readonly XxHash64 _checksum = new();
    private byte[] _carry = new byte[256];
    private int _carryLength;

    // Replica mode: the records of the key group not known to be complete yet, and the last key applied.
    private readonly bool _byKeyGroup;
    private byte[] _group = [];
    private int _groupLength;
    private int _groupKeyOffset;
    private int _groupKeyLength;
    private byte[]? _lastKey;

    public ReduceOutput(IMapReduceJob job, string? path)
        : this(job, path, byKeyGroup: false)
    {
    }

    private ReduceOutput(IMapReduceJob job, string? path, bool byKeyGroup)
    {
        _byKeyGroup = byKeyGroup;
        ArgumentNullException.ThrowIfNull(job);
        _job = job;
        Path = path;
        if (path is not null)
        {
            Directory.CreateDirectory(System.IO.Path.GetDirectoryName(path)!);
            _file = new FileStream(path, FileMode.Create, FileAccess.Write, FileShare.Read, 1, FileOptions.None);
            _formatted = new ArrayBufferWriter<byte>(FlushBytes + 4096);
        }
    }

    /// <summary>A replica of a root reducer's output: applied one whole key group at a time.</summary>
    public static ReduceOutput ForReplica(IMapReduceJob job, string? path) => new(job, path, byKeyGroup: true);

    /// <summary>
    /// The replica becomes the reduce task's output, its file renamed to <paramref name="finalPath"/>: the incomplete
    /// last group is dropped, and the task resumes after every record of the last key applied (or from the start when
    /// none was).
    /// </summary>
    public ResumePoint TakeOver(string? finalPath)
    {
        _groupLength = 0;
        _carryLength = 0;
        if (_file is not null && finalPath is not null && finalPath != Path)
        {
            // The file is open: renaming it keeps the handle, and the reducer goes on appending.
            File.Move(Path!, finalPath, overwrite: true);
            Path = finalPath;
        }
        return _lastKey is null ? ResumePoint.Start : ResumePoint.After(_lastKey, ResumePoint.SkipAll);
    }

    /// <summary>The output file, or null when output is discarded.</summary>
    public string? Path { get; private set; }

    public long Records { get; private set; }

    /// <summary>Key plus value bytes of the output records (the paper's output size).</summary>
    public long LogicalBytes { get; private set; }

    /// <summary>Bytes of the encoded record stream the reducer produced.</summary>
    public long StreamBytes { get; private set; }

    /// <summary>Bytes written to the output file (0 when discarded).</summary>
    public long FileBytes { get; private set; }

    /// <summary>xxHash64 of the encoded output record stream (set by <see cref="Complete"/>).</summary>
    public ulong Checksum { get; private set; }

    public static string PartName(int reduceTask) => string.Create(CultureInfo.InvariantCulture, $"part-{reduceTask:D5}");

    /// <summary>Consumes a chunk of the reducer's output stream (records may straddle chunks).</summary>
    public void Write(ReadOnlySpan<byte> chunk)
    {
        if (chunk.IsEmpty)
        {
            return;
        }
        if (!_byKeyGroup)
        {
            StreamBytes += chunk.Length;
            _checksum.Append(chunk);
        }
        // Complete a record straddling the previous chunk first, then continue in this one.
        while (_carryLength > 0 && !chunk.IsEmpty)
        {
            int needed = NeededForCarry(chunk);
            if (_carryLength + needed > _carry.Length)
            {
                Array.Resize(ref _carry, Math.Max(_carry.Length * 2, _carryLength + needed));
            }
            chunk[..needed].CopyTo(_carry.AsSpan(_carryLength));
            _carryLength += needed;
            chunk = chunk[needed..];
            var carried = RecordCodec.TryParse(_carry.AsSpan(0, _carryLength), out var bounds);
            if (carried == RecordParseStatus.Complete)
            {
                Emit(_carry.AsSpan(0, _carryLength), bounds);
                _carryLength = 0;
            }
            else if (carried == RecordParseStatus.Malformed)
            {
                throw new InvalidDataException($"reduce output of job '{_job.Name}' is not a valid record stream");
            }
        }
        while (!chunk.IsEmpty)
        {
            var status = RecordCodec.TryParse(chunk, out var bounds);
            if (status == RecordParseStatus.Complete)
            {
                Emit(chunk, bounds);
                chunk = chunk[bounds.Length..];
                continue;
            }
            if (status == RecordParseStatus.Malformed)
            {
                throw new InvalidDataException($"reduce output of job '{_job.Name}' is not a valid record stream");
            }
            if (_carry.Length < chunk.Length)
            {
                Array.Resize(ref _carry, Math.Max(_carry.Length * 2, chunk.Length));
            }
            chunk.CopyTo(_carry);
            _carryLength = chunk.Length;
            return;
        }
        if (_formatted is not null && _formatted.WrittenCount >= FlushBytes)
        {
            FlushFile();
        }
    }

    /// <summary>Flushes and closes the file; the output is complete.</summary>
    public void Complete()
    {
        if (_carryLength > 0)
        {
            throw new InvalidDataException($"reduce output of job '{_job.Name}' ends in the middle of a record");
        }
        ApplyGroup();
        Checksum = _checksum.GetDigest();
        if (_file is not null)
        {
            FlushFile();
            _file.Dispose();
        }
    }

    public void Dispose() => _file?.Dispose();

    /// <summary>Bytes of <paramref name="chunk"/> that complete the carried record (all of it if the record is longer).</summary>
    private int NeededForCarry(ReadOnlySpan<byte> chunk)
    {
        // Parse the header from the carry plus up to 6 chunk bytes to learn the record's length.
        Span<byte> head = stackalloc byte[RecordLimits.MaxHeaderBytes];
        int have = Math.Min(_carryLength, head.Length);
        _carry.AsSpan(0, have).CopyTo(head);
        int extra = Math.Min(head.Length - have, chunk.Length);
        chunk[..extra].CopyTo(head[have..]);
        var header = head[..(have + extra)];
        if (RecordCodec.TryReadVarint(header, RecordLimits.MaxKeyBytes, out int keyLength, out int keyHeader) != RecordParseStatus.Complete
            || RecordCodec.TryReadVarint(header[keyHeader..], RecordLimits.MaxValueBytes, out int valueLength, out int valueHeader) != RecordParseStatus.Complete)
        {
            return Math.Min(chunk.Length, RecordLimits.MaxHeaderBytes);
        }
        int total = keyHeader + valueHeader + keyLength + valueLength;
        return Math.Min(chunk.Length, total - _carryLength);
    }

    private void Emit(ReadOnlySpan<byte> record, RecordBounds bounds)
    {
        if (_byKeyGroup)
        {
            Hold(record, bounds);
            return;
        }
        Apply(record, bounds);
    }

    /// <summary>Keeps a record in the current key group; a record with another key completes the group first.</summary>
    private void Hold(ReadOnlySpan<byte> record, RecordBounds bounds)
    {
        var span = record[..bounds.Length];
        var key = span.Slice(bounds.KeyOffset, bounds.KeyLength);
        if (_groupLength > 0 && !key.SequenceEqual(_group.AsSpan(_groupKeyOffset, _groupKeyLength)))
        {
            ApplyGroup();
        }
        if (_groupLength == 0)
        {
            _groupKeyOffset = bounds.KeyOffset;
            _groupKeyLength = bounds.KeyLength;
        }
        if (_group.Length < _groupLength + span.Length)
        {
            Array.Resize(ref _group, Math.Max(Math.Max(256, _group.Length * 2), _groupLength + span.Length));
        }
        span.CopyTo(_group.AsSpan(_groupLength));
        _groupLength += span.Length;
    }

    private void ApplyGroup()
    {
        if (_groupLength == 0)
        {
            return;
        }
        var group = _group.AsSpan(0, _groupLength);
        StreamBytes += group.Length;
        _checksum.Append(group);
        _lastKey = group.Slice(_groupKeyOffset, _groupKeyLength).ToArray();
        while (!group.IsEmpty)
        {
            RecordCodec.TryParse(group, out var bounds);
            Apply(group, bounds);
            group = group[bounds.Length..];
        }
        _groupLength = 0;
        if (_formatted is not null && _formatted.WrittenCount >= FlushBytes)
        {
            FlushFile();
        }
    }

    private void Apply(ReadOnlySpan<byte> record, RecordBounds bounds)
    {
        Records++;
        LogicalBytes += bounds.KeyLength + bounds.ValueLength;
        if (_formatted is not null)
        {
            _job.FormatOutput(record.Slice(bounds.KeyOffset, bounds.KeyLength), record.Slice(bounds.ValueOffset, bounds.ValueLength), _formatted);
        }
    }

    private void FlushFile()
    {
        _file!.Write(_formatted!.WrittenSpan);
        FileBytes += _formatted.WrittenCount;
        _formatted.ResetWrittenCount();
    }
}
