using System.Security.Cryptography;
using Camdoop.ChunkStore;
using Camdoop.FrontEnd.Wire;
using Camdoop.KeyRouting;
using Camdoop.Records;

namespace Camdoop.FrontEnd;

// Datasets: put (begin, chunks in parts, end), get (manifest, then chunks), ls.
public sealed partial class FrontEndSession
{
    private Upload? _upload;

    private Task HandleMoreAsync(FrontEndRequest request, FrontEndReplies replies, CancellationToken cancellation) => request switch
    {
        PutBeginRequest begin => PutBeginAsync(begin, replies, cancellation),
        PutChunkRequest chunk => PutChunkAsync(chunk, replies, cancellation),
        PutEndRequest => PutEndAsync(replies, cancellation),
        GetManifestRequest manifest => GetManifestAsync(manifest, replies, cancellation),
        GetChunkRequest chunk => GetChunkAsync(chunk, replies, cancellation),
        LsRequest => ListAsync(replies, cancellation),
        _ => HandleJobsAsync(request, replies, cancellation),
    };

    private void DisposeUploads()
    {
        DropChunk();
        _upload = null;
    }

    private async Task PutBeginAsync(PutBeginRequest request, FrontEndReplies replies, CancellationToken cancellation)
    {
        string name = Names.CheckDataset(Field.Required(request.Name, "name"));
        var format = Field.Required(request.Format, "format") switch
        {
            "text" => DatasetFormat.Text,
            "records" => DatasetFormat.Records,
            var f => throw new FrontEndException($"unknown dataset format '{f}' (text or records)"),
        };
        int recordSize = format == DatasetFormat.Records ? Field.InRange(request.RecordSize, "recordSize", 1, InputFormatLimits.MaxRecordBytes) : 0;
        int chunks = Field.InRange(request.Chunks, "chunks", 1, DatasetManifest.MaxChunks);
        long total = Field.Required(request.TotalBytes, "totalBytes");
        if (total < 0)
        {
            throw new FrontEndException("field 'totalBytes' cannot be negative");
        }
        var existing = await ReadManifestAsync(name).ConfigureAwait(false);
        if (existing is not null)
        {
            throw new FrontEndException($"dataset '{name}' already exists ({existing.Chunks.Count} chunks, {existing.TotalBytes} bytes)");
        }
        DropChunk();
        _upload = new Upload(name, format, recordSize, chunks, total, BitConverter.ToUInt64(RandomNumberGenerator.GetBytes(8)));
        await replies.SendAsync(new PutBeginReply { Servers = _node.Loop.Host.Torus.Count }, cancellation).ConfigureAwait(false);
    }

    private async Task PutChunkAsync(PutChunkRequest request, FrontEndReplies replies, CancellationToken cancellation)
    {
        var upload = _upload ?? throw new FrontEndException("no upload in progress on this connection (send put-begin first)");
        int index = Field.InRange(request.Index, "index", 0, upload.ChunkCount - 1);
        long length = Field.Required(request.Length, "length");
        long offset = Field.Required(request.Offset, "offset");
        var data = Field.Required(request.Data, "data");
        if (length < 0 || length > ChunkMeta.MaxChunkBytes)
        {
            throw new FrontEndException($"chunk length {length} is out of range (at most {ChunkMeta.MaxChunkBytes} bytes)");
        }
        long most = Math.Min(_maxHeldBytes, _budget.Limit);
        if (length > most)
        {
            throw new FrontEndException($"chunk {index} of {length} bytes is larger than this front-end holds for one connection ({most} bytes); store the file with a smaller --chunk-size");
        }
        if (upload.Stored[index] is not null)
        {
            throw new FrontEndException($"chunk {index} was already stored");
        }
        if (upload.Current is null || upload.Current.Index != index)
        {
            if (offset != 0)
            {
                throw new FrontEndException($"chunk {index} must start at offset 0");
            }
            DropChunk();
            upload.Current = new ChunkAssembly(index, length);
        }
        var chunk = upload.Current;
        if (chunk.Length != length || !chunk.Continues(offset, data.Length))
        {
            throw new FrontEndException($"chunk {index}: part at offset {offset} with {data.Length} bytes does not continue the {chunk.Received} of {length} bytes received");
        }
        await GrowChunkAsync(chunk.GrowthFor(data.Length), cancellation).ConfigureAwait(false);
        // The room is granted and the part continues the chunk (checked above): it is appended.
        chunk.TryAppend(offset, data.Span);
        if (request.Final != true)
        {
            await replies.SendAsync(new PutChunkReply { Received = chunk.Received }, cancellation).ConfigureAwait(false);
            return;
        }
        if (!chunk.IsComplete)
        {
            throw new FrontEndException($"chunk {index}: only {chunk.Received} of {length} bytes arrived before the final part");
        }
        var bytes = chunk.Bytes;
        upload.Current = null;
        // The buffer stays held until the replicas have it: the store sends from it.
        long held = TakeChunkHeld();
        (ChunkMeta Meta, WriteResult Result) stored;
        try
        {
            stored = await StoreChunkAsync(upload, index, bytes, request.Checksum).ConfigureAwait(false);
        }
        finally
        {
            _budget.Release(held);
        }
        var (meta, result) = stored;
        if (!result.Ok)
        {
            throw new FrontEndException($"storing chunk {index} of '{upload.Name}' failed: {result.Error}");
        }
        upload.Stored[index] = new ManifestChunk(meta.Id, meta.Length, meta.Checksum);
        await replies.SendAsync(
            new PutChunkReply
            {
                Chunk = meta.Id.ToString(),
                Replicas = result.Replicas.Select(c => c.Name).ToList(),
            },
            cancellation).ConfigureAwait(false);
    }

    /// <summary>Checks a complete chunk against the client's checksum, if it sent one, and stores it at its replicas.</summary>
    private async Task<(ChunkMeta Meta, WriteResult Result)> StoreChunkAsync(Upload upload, int index, byte[] bytes, long? expected)
    {
        ulong checksum = XxHash64.Hash(bytes);
        if (expected is { } sent && (ulong)sent != checksum)
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
        return (meta, result);
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
        DropChunk();
        _upload = null;
        await replies.SendAsync(
            new PutEndReply { Name = manifest.Name, Chunks = manifest.Chunks.Count, Bytes = manifest.TotalBytes },
            cancellation).ConfigureAwait(false);
    }

    private async Task GetManifestAsync(GetManifestRequest request, FrontEndReplies replies, CancellationToken cancellation)
    {
        string name = Field.Required(request.Name, "name");
        var manifest = await ReadManifestAsync(name).ConfigureAwait(false)
            ?? throw new FrontEndException($"unknown dataset '{name}'");
        await replies.SendAsync(
            new ManifestReply
            {
                Name = manifest.Name,
                Format = manifest.FormatName,
                TotalBytes = manifest.TotalBytes,
                Created = manifest.CreatedUnixMs,
                Chunks = manifest.Chunks.Select(c => new ManifestChunkInfo { Id = c.Id.ToString(), Length = c.Length, Checksum = (long)c.Checksum }).ToList(),
            },
            cancellation).ConfigureAwait(false);
    }

    private async Task GetChunkAsync(GetChunkRequest request, FrontEndReplies replies, CancellationToken cancellation)
    {
        string text = Field.Required(request.Chunk, "chunk");
        if (!Key.TryParse(text, out var id))
        {
            throw new FrontEndException($"'{text}' is not a chunk id (40 hex digits)");
        }
        var (result, held) = await ReadWithinBudgetAsync((done, admit) => _node.Store.Read(id, done, admit), cancellation).ConfigureAwait(false);
        try
        {
            if (!result.Ok)
            {
                throw new FrontEndException(result.Error ?? $"chunk {id} could not be read");
            }
            var bytes = result.Bytes!;
            await SendDataPartsAsync(bytes, replies, cancellation).ConfigureAwait(false);
            await replies.SendAsync(
                new GetChunkReply
                {
                    Length = bytes.Length,
                    Checksum = (long)result.Meta!.Checksum,
                    From = result.From.Name,
                    Repairs = result.Repairs,
                },
                cancellation).ConfigureAwait(false);
        }
        finally
        {
            _budget.Release(held);
        }
    }

    private async Task ListAsync(FrontEndReplies replies, CancellationToken cancellation)
    {
        var result = await _node.Start<ListResult>(done => _node.Store.ListManifests(done)).ConfigureAwait(false);
        await replies.SendAsync(
            new LsReply
            {
                Datasets = result.Manifests.Select(m => new DatasetInfo
                {
                    Name = m.Dataset,
                    Bytes = m.DatasetBytes,
                    Chunks = m.Count,
                    Format = m.Format == DatasetFormat.Text ? "text" : FormattableString.Invariant($"records{m.RecordSize}"),
                }).ToList(),
                ServersAsked = result.ServersAsked,
                Unanswered = result.Unanswered.Select(c => c.Name).ToList(),
            },
            cancellation).ConfigureAwait(false);
    }

    /// <summary>Reads and decodes a dataset's manifest; null when no replica server has it.</summary>
    private async Task<DatasetManifest?> ReadManifestAsync(string name)
    {
        Names.CheckDataset(name);
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

        /// <summary>The chunk whose parts are arriving; null between chunks.</summary>
        public ChunkAssembly? Current { get; set; }
    }
}
