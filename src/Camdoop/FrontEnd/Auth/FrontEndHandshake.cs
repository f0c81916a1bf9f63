using System.Security.Cryptography;
using System.Text;

namespace Camdoop.FrontEnd.Auth;

/// <summary>Why a front-end refused a connection before serving it.</summary>
public enum HandshakeRefusal
{
    /// <summary>Nothing arrived in time, the client left before sending a byte, or its first request was not "auth".</summary>
    NoHandshake,

    /// <summary>An "auth" that could not be read: cut short, oversized, not MessagePack, fields missing or of the wrong size.</summary>
    Malformed,

    /// <summary>A well-formed "auth" whose proof was not made with this cluster's key.</summary>
    WrongKey,
}

/// <summary>
/// The front-end's challenge-response, mutual: the server sends a random nonce Ns; the client answers with its own
/// nonce Nc and HMAC-SHA256(key, "camdoop-frontend-auth-1 client" || Ns || Nc); the server checks it and answers
/// with HMAC-SHA256(key, "camdoop-frontend-auth-1 server" || Ns || Nc). Fresh nonces on both sides make every proof
/// good for one connection only (a recorded handshake cannot be replayed to either side), and the two labels keep a
/// client's proof from being reflected back as a server's. Proofs are compared in constant time.
/// </summary>
public static class FrontEndHandshake
{
    /// <summary>The handshake's name and version, sent in the challenge and mixed into every proof.</summary>
    public const string Protocol = "camdoop-frontend-auth-1";

    public const int NonceBytes = 32;

    public const int ProofBytes = 32;

    /// <summary>Largest "auth" message the front-end reads from a client it does not know yet.</summary>
    public const int MaxMessageBytes = 1024;

    private static readonly byte[] ClientLabel = Encoding.ASCII.GetBytes(Protocol + " client");

    private static readonly byte[] ServerLabel = Encoding.ASCII.GetBytes(Protocol + " server");

    public static byte[] NewNonce() => RandomNumberGenerator.GetBytes(NonceBytes);

    /// <summary>What the client sends: its proof over both nonces.</summary>
    public static byte[] ClientProof(ClusterKey key, ReadOnlySpan<byte> serverNonce, ReadOnlySpan<byte> clientNonce) =>
        Proof(key, ClientLabel, serverNonce, clientNonce);

    /// <summary>What the server sends back once the client's proof checked out.</summary>
    public static byte[] ServerProof(ClusterKey key, ReadOnlySpan<byte> serverNonce, ReadOnlySpan<byte> clientNonce) =>
        Proof(key, ServerLabel, serverNonce, clientNonce);

    /// <summary>True when <paramref name="given"/> is <paramref name="expected"/>, in time independent of where they differ.</summary>
    public static bool Matches(ReadOnlySpan<byte> expected, ReadOnlySpan<byte> given) =>
        given.Length == expected.Length && CryptographicOperations.FixedTimeEquals(expected, given);

    private static byte[] Proof(ClusterKey key, byte[] label, ReadOnlySpan<byte> serverNonce, ReadOnlySpan<byte> clientNonce)
    {
        ArgumentNullException.ThrowIfNull(key);
        if (serverNonce.Length != NonceBytes || clientNonce.Length != NonceBytes)
        {
            throw new ArgumentException($"handshake nonces are {NonceBytes} bytes");
        }
        Span<byte> message = stackalloc byte[label.Length + 2 * NonceBytes];
        label.CopyTo(message);
        serverNonce.CopyTo(message[label.Length..]);
        clientNonce.CopyTo(message[(label.Length + NonceBytes)..]);
        var proof = new byte[ProofBytes];
        key.Mac(message, proof);
        return proof;
    }
}
