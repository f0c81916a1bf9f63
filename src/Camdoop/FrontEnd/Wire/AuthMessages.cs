using MessagePack;

namespace Camdoop.FrontEnd.Wire;

/// <summary>
/// The first message of every connection, sent by the front-end before it reads anything: a fresh random nonce the
/// client must answer with <see cref="AuthRequest"/> (<c>Auth.FrontEndHandshake</c>). It has a reply's
/// fields (id 0, ok) so that a front-end that cannot serve the connection can send an error in its place.
/// </summary>
[MessagePackObject]
public sealed class AuthChallenge : FrontEndReply
{
    /// <summary>The handshake's version, <c>FrontEndHandshake.Protocol</c>.</summary>
    [Key("protocol")]
    public string Protocol { get; set; } = "";

    [Key("nonce")]
    public ReadOnlyMemory<byte> Nonce { get; set; }
}

/// <summary>"auth": the client's nonce and its proof that it holds the cluster key. Must be a connection's first request.</summary>
[MessagePackObject]
public sealed class AuthRequest : FrontEndRequest<AuthReply>
{
    public override string Op => "auth";

    [Key("nonce")]
    public ReadOnlyMemory<byte>? Nonce { get; set; }

    [Key("proof")]
    public ReadOnlyMemory<byte>? Proof { get; set; }
}

/// <summary>The front-end's proof that it holds the cluster key too, over the same two nonces.</summary>
[MessagePackObject]
public sealed class AuthReply : FrontEndReply
{
    [Key("proof")]
    public ReadOnlyMemory<byte> Proof { get; set; }
}
