using System.Security.Cryptography;
using Camdoop.KeyRouting;
using Camdoop.MapReduce.ChunkStore;
using Camdoop.MapReduce.FrontEnd.Wire;
using Camdoop.MapReduce.Records;

namespace Camdoop.MapReduce.FrontEnd;

// Datasets: put (begin, chunks in parts, end), get (manifest, then chunks), ls.
public sealed partial class FrontEndSession
{
    private Upload? _upload;

    private Task HandleMoreAsync(WireMessage request, FrontEndReplies replies, CancellationToken cancellation) => request.Op switch
    {
        "put-begin" => PutBeginAsync(request, replies, cancellation),
        "put-chunk" => PutChunkAsync(request, replies, cancellation),
        "put-end" => PutEndAsync(replies, cancellation),
        "get-manifest" => GetManifestAsync(request, replies, cancellation),
        "get-chunk" => GetChunkAsync(request, replies, cancellation),
        "ls" => ListAsync(replies, cancellation),
        _ => HandleJobsAsync(request, replies, cancellation),
    };

    private void DisposeUploads() => _upload = null;

    private async Task PutBeginAsync(WireMessage request, FrontEndReplies replies, CancellationToken cancellation)
    {
        string name = request.GetString("name");
        if (!ChunkMeta.IsValidName(name))
        {
            throw new FrontEndException($"'{name}' is not a valid dataset name (1-200 letters, digits, '.', '_', '-')");
        }
        var format = request.GetString("format") switch
        {
            "text" => DatasetFormat.Text,
            "records" => DatasetFormat.Records,
            var f => throw new FrontEndException($"unknown dataset format '{f}' (text or records)"),
        };
        int recordSize = format == DatasetFormat.Records ? request.GetInt32("recordSize", 1, InputFormatLimits.MaxRecordBytes) : 0;
        int chunks = request.GetInt32("chunks", 1, DatasetManifest.MaxChunks);
        long total = request.GetInt64("totalBytes");
        if (total < 0)
        {
            throw new FrontEndException("field 'totalBytes' cannot be negative");
        }
        var existing = await ReadManifestAsync(name).ConfigureAwait(false);
        if (existing is not null)
        {
            throw new FrontEndException($"dataset '{name}' already exists ({existing.Chunks.Count} chunks, {existing.TotalBytes} bytes)");
        }
        _upload = new Upload(name, format, recordSize, chunks, total, BitConverter.ToUInt64(RandomNumberGenerator.GetBytes(8)));
        await replies.SendAsync(new WireMessage { { "servers", (long)_node.Loop.Host.Torus.Count } }, cancellation).ConfigureAwait(false);
    }

    private async Task PutChunkAsync(WireMessage request, FrontEndReplies replies, CancellationToken cancellation)
    {
        var upload = _upload ?? throw new FrontEndException("no upload in progress on this connection (send put-begin first)");
        int index = request.GetInt32("index", 0, upload.ChunkCount - 1);
        long length = request.GetInt64("length");
        long offset = request.GetInt64("offset");
        var data = request.GetBinary("data");
        if (length < 0 || length > ChunkMeta.MaxChunkBytes)
        {
            throw new FrontEndException($"chunk length {length} is out of range (at most {ChunkMeta.MaxChunkBytes} bytes)");
        }
        if (upload.Stored[index] is not null)
        {
            throw new FrontEndException($"chunk {index} was already stored");
        }
        if (upload.Current is null || upload.CurrentIndex != index)
        {
            if (offset != 0)
            {
                throw new FrontEndException($"chunk {index} must start at offset 0");
            }
            upload.Current = new byte[length];
            upload.CurrentIndex = index;
            upload.Received = 0;
        }
        if (upload.Current.Length != length || offset != upload.Received || data.Length > length - offset)
        {
            throw new FrontEndException($"chunk {index}: part at offset {offset} with {data.Length} bytes does not continue the {upload.Received} of {length} bytes received");
        }
        data.CopyTo(upload.Current.AsSpan((int)offset));
        upload.Received += data.Length;
        if (!request.GetBoolean("final"))
        {
            await replies.SendAsync(new WireMessage { { "received", upload.Received } }, cancellation).ConfigureAwait(false);
            return;
        }
        if (upload.Received != length)
        {
            throw new FrontEndException($"chunk {index}: only {upload.Received} of {length} bytes arrived before the final part");
        }
        var bytes = upload.Current;
        upload.Current = null;
        ulong checksum = XxHash64.Hash(bytes);
        if (request.Has("checksum") && (ulong)request.GetInt64("checksum") != checksum)
        {
            throw new FrontEndException($"chunk {index}: the bytes received do not match the client's checksum");
        }
        var torus = _node.Loop.Host.Torus;
        var meta = new ChunkMeta
        {
            Id = ChunkPlacement.ChunkId(torus, upload.Name, index, upload.Nonce),
            Kind = ChunkKind.Data,
            Length = bytes.Length,
            Checksum = checksum,
            Dataset = upload.Name,
            Index = index,
            Count = upload.ChunkCount,
            DatasetBytes = upload.TotalBytes,
            Format = upload.Format,
            RecordSize = upload.RecordSize,
        };
        var result = await _node.Start<WriteResult>(done => _node.Store.Write(meta, bytes, done)).ConfigureAwait(false);
        if (!result.Ok)
        {
            throw new FrontEndException($"storing chunk {index} of '{upload.Name}' failed: {result.Error}");
        }
        upload.Stored[index] = new ManifestChunk(meta.Id, meta.Length, checksum);
        await replies.SendAsync(
            new WireMessage
            {
                { "chunk", meta.Id.ToString() },
                { "replicas", result.Replicas.Select(c => (object?)Format(c)).ToList() },
            },
            cancellation).ConfigureAwait(false);
    }

    private async Task PutEndAsync(FrontEndReplies replies, CancellationToken cancellation)
    {
        var upload = _upload ?? throw new FrontEndException("no upload in progress on this connection (send put-begin first)");
        int missing = Array.FindIndex(upload.Stored, c => c is null);
        if (missing >= 0)
        {
            throw new FrontEndException($"chunk {missing} of '{upload.Name}' was never stored");
        }
        long total = upload.Stored.Sum(c => c!.Length);
        if (total != upload.TotalBytes)
        {
            throw new FrontEndException($"the chunks hold {total} bytes, but put-begin announced {upload.TotalBytes}");
        }
        var manifest = new DatasetManifest
        {
            Name = upload.Name,
            Format = upload.Format,
            RecordSize = upload.RecordSize,
            TotalBytes = total,
            CreatedUnixMs = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds(),
            Chunks = upload.Stored!,
        };
        var (meta, bytes) = manifest.ToChunk();
        var result = await _node.Start<WriteResult>(done => _node.Store.Write(meta, bytes, done)).ConfigureAwait(false);
        if (!result.Ok)
        {
            throw new FrontEndException($"storing the manifest of '{upload.Name}' failed: {result.Error}");
        }
        _upload = null;
        await replies.SendAsync(
            new WireMessage { { "name", manifest.Name }, { "chunks", (long)manifest.Chunks.Count }, { "bytes", manifest.TotalBytes } },
            cancellation).ConfigureAwait(false);
    }

    private async Task GetManifestAsync(WireMessage request, FrontEndReplies replies, CancellationToken cancellation)
    {
        string name = request.GetString("name");
        var manifest = await ReadManifestAsync(name).ConfigureAwait(false)
            ?? throw new FrontEndException($"unknown dataset '{name}'");
        await replies.SendAsync(
            new WireMessage
            {
                { "name", manifest.Name },
                { "format", manifest.FormatName },
                { "totalBytes", manifest.TotalBytes },
                { "created", manifest.CreatedUnixMs },
                {
                    "chunks", manifest.Chunks.Select(c => (object?)new WireMessage
                    {
                        { "id", c.Id.ToString() },
                        { "length", c.Length },
                        { "checksum", (long)c.Checksum },
                    }).ToList()
                },
            },
            cancellation).ConfigureAwait(false);
    }

    private async Task GetChunkAsync(WireMessage request, FrontEndReplies replies, CancellationToken cancellation)
    {
        string text = request.GetString("chunk");
        if (!Key.TryParse(text, out var id))
        {
            throw new FrontEndException($"'{text}' is not a chunk id (40 hex digits)");
        }
        var result = await _node.Start<ReadResult>(done => _node.Store.Read(id, done)).ConfigureAwait(false);
        if (!result.Ok)
        {
            throw new FrontEndException(result.Error ?? $"chunk {id} could not be read");
        }
        var bytes = result.Bytes!;
        for (int offset = 0; offset < bytes.Length; offset += MessageFraming.MaxDataPartBytes)
        {
            int n = Math.Min(MessageFraming.MaxDataPartBytes, bytes.Length - offset);
            await replies.SendPartAsync(new WireMessage { { "offset", (long)offset }, { "data", new ArraySegment<byte>(bytes, offset, n) } }, cancellation).ConfigureAwait(false);
        }
        await replies.SendAsync(
            new WireMessage
            {
                { "length", (long)bytes.Length },
                { "checksum", (long)result.Meta!.Checksum },
                { "from", Format(result.From) },
                { "repairs", (long)result.Repairs },
            },
            cancellation).ConfigureAwait(false);
    }

    private async Task ListAsync(FrontEndReplies replies, CancellationToken cancellation)
    {
        var result = await _node.Start<ListResult>(done => _node.Store.ListManifests(done)).ConfigureAwait(false);
        await replies.SendAsync(
            new WireMessage
            {
                {
                    "datasets", result.Manifests.Select(m => (object?)new WireMessage
                    {
                        { "name", m.Dataset },
                        { "bytes", m.DatasetBytes },
                        { "chunks", (long)m.Count },
                        { "format", m.Format == DatasetFormat.Text ? "text" : FormattableString.Invariant($"records{m.RecordSize}") },
                    }).ToList()
                },
                { "serversAsked", (long)result.ServersAsked },
                { "unanswered", result.Unanswered.Select(c => (object?)Format(c)).ToList() },
            },
            cancellation).ConfigureAwait(false);
    }

    /// <summary>Reads and decodes a dataset's manifest; null when no replica server has it.</summary>
    private async Task<DatasetManifest?> ReadManifestAsync(string name)
    {
        if (!ChunkMeta.IsValidName(name))
        {
            throw new FrontEndException($"'{name}' is not a valid dataset name");
        }
        var id = ChunkPlacement.ManifestId(name);
        var result = await _node.Start<ReadResult>(done => _node.Store.Read(id, done)).ConfigureAwait(false);
        if (result.NotFound)
        {
            return null;
        }
        if (!result.Ok)
        {
            throw new FrontEndException($"the manifest of dataset '{name}' could not be read: {result.Error}");
        }
        try
        {
            return DatasetManifest.Decode(result.Bytes);
        }
        catch (InvalidDataException e)
        {
            throw new FrontEndException($"the manifest of dataset '{name}' is damaged: {e.Message}", e);
        }
    }

    private static string Format(Runtime.Topology.Coordinate c) => FormattableString.Invariant($"{c.X},{c.Y},{c.Z}");

    /// <summary>An upload in progress on this connection: the chunk being received and the chunks stored so far.</summary>
    private sealed class Upload(string name, DatasetFormat format, int recordSize, int chunkCount, long totalBytes, ulong nonce)
    {
        public string Name { get; } = name;

        public DatasetFormat Format { get; } = format;

        public int RecordSize { get; } = recordSize;

        public int ChunkCount { get; } = chunkCount;

        public long TotalBytes { get; } = totalBytes;

        public ulong Nonce { get; } = nonce;

        public ManifestChunk?[] Stored { get; } = new ManifestChunk?[chunkCount];

        public byte[]? Current { get; set; }

        public int CurrentIndex { get; set; } = -1;

        public long Received { get; set; }
    }
}
