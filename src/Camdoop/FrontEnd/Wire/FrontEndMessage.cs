using System.Buffers;
using System.Diagnostics.CodeAnalysis;
using MessagePack;

namespace Camdoop.FrontEnd.Wire;

/// <summary>
/// A request to a front-end: a MessagePack map whose "op" names the operation and whose "id" the replies echo. Keys
/// are the field names as strings rather than array indices: the wire stays self-describing (optional fields can be
/// left out or added without renumbering, a capture reads as JSON) and a reply's keys are the names the CLI's JSON
/// output uses; the few bytes of names do not matter next to the data parts. Fields a client may leave out or get
/// wrong are nullable and checked by the session (<see cref="Field"/>), so a missing field is named in the error.
/// </summary>
public abstract class FrontEndRequest
{
    [Key("op")]
    public abstract string Op { get; }

    [Key("id")]
    public long Id { get; set; }
}

/// <summary>A request answered by one <typeparamref name="TReply"/>.</summary>
public abstract class FrontEndRequest<TReply> : FrontEndRequest
    where TReply : FrontEndReply;

/// <summary>A request answered by <typeparamref name="TPart"/> parts (<c>more</c> = true), then one <typeparamref name="TReply"/>.</summary>
public abstract class FrontEndRequest<TReply, TPart> : FrontEndRequest<TReply>
    where TReply : FrontEndReply
    where TPart : FrontEndReply;

/// <summary>
/// Every reply carries the request's id and ok; a partial reply also more = true. A request gets zero or more
/// partial replies and exactly one final reply (ok true, or ok false with an error: <see cref="ReplyEnvelope"/>).
/// </summary>
public abstract class FrontEndReply
{
    [Key("id")]
    public long Id { get; set; }

    [Key("ok")]
    public bool Ok { get; set; } = true;

    [Key("more")]
    public bool More { get; set; }
}

/// <summary>
/// The fields every reply has, plus "error": what a client reads first to learn whether a reply is an error, a part
/// or the final answer; also the error reply itself and the empty reply of a request that needs no answer.
/// </summary>
[MessagePackObject]
public sealed class ReplyEnvelope : FrontEndReply
{
    [Key("error")]
    public string? Error { get; set; }

    /// <summary>
    /// The connection was refused before its handshake because the front-end is busy with others: the same request is
    /// worth making again a little later (the client does so by itself for a while).
    /// </summary>
    [Key("busy")]
    public bool Busy { get; set; }

    /// <summary>
    /// A partial reply that carries nothing: the request is still being served (a standing query between rounds).
    /// Sent so that a client that went away is noticed, by the write that fails, within seconds; clients skip it.
    /// </summary>
    [Key("keepAlive")]
    public bool KeepAlive { get; set; }

    public static ReplyEnvelope Failure(long id, string error) => new() { Id = id, Ok = false, Error = error };

    public static ReplyEnvelope BusyRefusal(string error) => new() { Id = 0, Ok = false, Error = error, Busy = true };
}

/// <summary>What the server reads first of every request: its operation and id.</summary>
[MessagePackObject]
public sealed class RequestEnvelope
{
    [Key("op")]
    public string? Op { get; set; }

    [Key("id")]
    public long Id { get; set; }
}

/// <summary>The operations a front-end server understands: each "op" and the request type its body is read as.</summary>
public sealed class FrontEndOperations
{
    private readonly Dictionary<string, Func<ReadOnlySequence<byte>, FrontEndRequest>> _readers = new(StringComparer.Ordinal);

    /// <summary>Every operation of Camdoop's front-end.</summary>
    public static FrontEndOperations All { get; } = new FrontEndOperations()
        .Add<HelloRequest>()
        .Add<StatusRequest>()
        .Add<PingRequest>()
        .Add<PutBeginRequest>()
        .Add<PutChunkRequest>()
        .Add<PutEndRequest>()
        .Add<GetManifestRequest>()
        .Add<GetChunkRequest>()
        .Add<LsRequest>()
        .Add<SubmitRequest>()
        .Add<JobStatusRequest>()
        .Add<JobPartRequest>()
        .Add<JobsRequest>()
        .Add<KillRequest>()
        .Add<RmRequest>()
        .Add<QueryRequest>()
        .Add<LimitRequest>()
        .Add<LimitsRequest>()
        .Add<WebLoginRequest>()
        .Add<WebRevokeRequest>()
        .Add<MetricsRequest>()
        .Add<MetricsTokenRequest>()
        .Add<MetricsRevokeRequest>()
        .Add<FsckRequest>()
        .Add<DecommissionRequest>();

    public FrontEndOperations Add<T>()
        where T : FrontEndRequest, new()
    {
        _readers.Add(new T().Op, body => FrontEndWire.Read<T>(body));
        return this;
    }

    /// <summary>
    /// Reads a validated body as the request type of <paramref name="op"/>; false for an unknown operation. A field
    /// of the wrong type is a <see cref="FrontEndException"/> naming it.
    /// </summary>
    public bool TryRead(string op, in ReadOnlySequence<byte> body, [NotNullWhen(true)] out FrontEndRequest? request)
    {
        ArgumentNullException.ThrowIfNull(op);
        if (_readers.TryGetValue(op, out var read))
        {
            request = read(body);
            return true;
        }
        request = null;
        return false;
    }
}

/// <summary>Checks of request fields, with the errors the user sees.</summary>
public static class Field
{
    public static string Required(string? value, string name) => value ?? throw Missing(name, "a string");

    public static long Required(long? value, string name) => value ?? throw Missing(name, "an integer");

    public static ReadOnlyMemory<byte> Required(ReadOnlyMemory<byte>? value, string name) => value ?? throw Missing(name, "binary data");

    /// <summary>An integer field within [<paramref name="min"/>, <paramref name="max"/>].</summary>
    public static int InRange(long? value, string name, int min, int max)
    {
        long v = Required(value, name);
        return v >= min && v <= max ? (int)v
            : throw new FrontEndException(FormattableString.Invariant($"field '{name}' must be between {min} and {max}, not {v}"));
    }

    private static FrontEndException Missing(string name, string what) => new($"field '{name}' is missing or is not {what}");
}
