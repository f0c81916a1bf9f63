using System.Buffers;
using System.Globalization;
using System.IO.Pipelines;
using Camdoop.FrontEnd.Auth;
using Camdoop.FrontEnd.Wire;

namespace Camdoop.FrontEnd;

// Authentication: every connection proves it holds the cluster key before its first request is served.
public sealed partial class FrontEndServer
{
    private long _authenticated;
    private long _noHandshake;
    private long _wrongKey;
    private long _malformedHandshake;

    /// <summary>Connections whose client proved it holds the cluster key.</summary>
    public long ConnectionsAuthenticated => Interlocked.Read(ref _authenticated);

    /// <summary>Connections refused because the client did not authenticate: silent past the timeout, gone, or a request first.</summary>
    public long RefusedNoHandshake => Interlocked.Read(ref _noHandshake);

    /// <summary>Connections refused because the client's proof was not made with this cluster's key.</summary>
    public long RefusedWrongKey => Interlocked.Read(ref _wrongKey);

    /// <summary>Connections refused because the client's "auth" could not be read.</summary>
    public long RefusedMalformedHandshake => Interlocked.Read(ref _malformedHandshake);

    /// <summary>
    /// Challenges the client and checks its answer (<see cref="FrontEndHandshake"/>), within
    /// <see cref="FrontEndServerOptions.HandshakeTimeout"/>. When the client proved it holds the key: the server's proof,
    /// for the caller to send once it has a session slot, and <paramref name="reader"/> stands at the client's first
    /// request. Null when it was refused: counted by reason, logged (without any secret or proof) and told why; the
    /// caller closes.
    /// </summary>
    private async Task<AuthReply?> AuthenticateAsync(PipeReader reader, FrontEndReplies replies, string remote, CancellationToken token)
    {
        byte[] serverNonce = FrontEndHandshake.NewNonce();
        await replies.SendRawAsync(new AuthChallenge { Protocol = FrontEndHandshake.Protocol, Nonce = serverNonce }, token).ConfigureAwait(false);
        using var deadline = CancellationTokenSource.CreateLinkedTokenSource(token);
        deadline.CancelAfter(_options.HandshakeTimeout);
        Refusal refusal;
        long received = 0;
        while (true)
        {
            ReadResult result;
            try
            {
                result = await reader.ReadAsync(deadline.Token).ConfigureAwait(false);
            }
            catch (OperationCanceledException) when (!token.IsCancellationRequested)
            {
                string waited = _options.HandshakeTimeout.TotalSeconds.ToString("0.###", CultureInfo.InvariantCulture);
                refusal = received == 0
                    ? new(HandshakeRefusal.NoHandshake, 0, $"no authentication within {waited} s")
                    : new(HandshakeRefusal.Malformed, 0, $"the authentication message was not complete within {waited} s");
                break;
            }
            var buffer = result.Buffer;
            received = buffer.Length;
            var status = MessageFraming.TryRead(ref buffer, FrontEndHandshake.MaxMessageBytes, out var body, out long declared);
            if (status == FrameReadStatus.Oversized)
            {
                refusal = new(HandshakeRefusal.Malformed, 0, $"an authentication message of {declared} bytes (at most {FrontEndHandshake.MaxMessageBytes})");
                break;
            }
            if (status == FrameReadStatus.Incomplete)
            {
                if (result.IsCompleted)
                {
                    refusal = received == 0
                        ? new(HandshakeRefusal.NoHandshake, 0, "the connection closed before authenticating")
                        : new(HandshakeRefusal.Malformed, 0, "the connection closed in the middle of the authentication message");
                    break;
                }
                reader.AdvanceTo(buffer.Start, buffer.End);
                continue;
            }
            var (failure, id, serverProof) = Check(body, serverNonce);
            // The "auth" message is consumed; requests the client sent right behind it stay in the pipe.
            reader.AdvanceTo(buffer.Start);
            if (failure is null)
            {
                Interlocked.Increment(ref _authenticated);
                return new AuthReply { Id = id, Proof = serverProof };
            }
            refusal = failure.Value;
            break;
        }
        switch (refusal.Reason)
        {
            case HandshakeRefusal.NoHandshake:
                Interlocked.Increment(ref _noHandshake);
                break;
            case HandshakeRefusal.WrongKey:
                Interlocked.Increment(ref _wrongKey);
                break;
            default:
                Interlocked.Increment(ref _malformedHandshake);
                break;
        }
        _refusals.Write($"front-end: refused {remote}: {refusal.Error}");
        try
        {
            await replies.SendRawAsync(ReplyEnvelope.Failure(refusal.Id, refusal.Error), token).ConfigureAwait(false);
        }
        catch (IOException)
        {
            // The client is gone already; it was refused all the same.
        }
        return null;
    }

    /// <summary>Checks one handshake message against this connection's nonce: a refusal, or the server's proof.</summary>
    private (Refusal? Failure, long Id, byte[] ServerProof) Check(ReadOnlySequence<byte> body, byte[] serverNonce)
    {
        RequestEnvelope envelope;
        try
        {
            envelope = FrontEndWire.Decode<RequestEnvelope>(body);
        }
        catch (Exception e) when (e is InvalidDataException or FrontEndException)
        {
            return (new(HandshakeRefusal.Malformed, 0, $"authentication refused: {e.Message}"), 0, []);
        }
        long id = envelope.Id;
        if (envelope.Op != new AuthRequest().Op)
        {
            return (new(HandshakeRefusal.NoHandshake, id, "authentication required: this front-end serves only clients that prove they hold the cluster key (camdoop --key-file)"), id, []);
        }
        AuthRequest auth;
        try
        {
            auth = FrontEndWire.Read<AuthRequest>(body);
        }
        catch (FrontEndException e)
        {
            return (new(HandshakeRefusal.Malformed, id, $"authentication refused: {e.Message}"), id, []);
        }
        if (auth.Nonce is not { Length: FrontEndHandshake.NonceBytes } clientNonce)
        {
            return (new(HandshakeRefusal.Malformed, id, $"authentication refused: field 'nonce' must be {FrontEndHandshake.NonceBytes} bytes of binary data"), id, []);
        }
        if (auth.Proof is not { Length: FrontEndHandshake.ProofBytes } proof)
        {
            return (new(HandshakeRefusal.Malformed, id, $"authentication refused: field 'proof' must be {FrontEndHandshake.ProofBytes} bytes of binary data"), id, []);
        }
        var expected = FrontEndHandshake.ClientProof(_key, serverNonce, clientNonce.Span);
        if (!FrontEndHandshake.Matches(expected, proof.Span))
        {
            return (new(HandshakeRefusal.WrongKey, id, "authentication failed: the client's key is not this cluster's key"), id, []);
        }
        return (null, id, FrontEndHandshake.ServerProof(_key, serverNonce, clientNonce.Span));
    }

    private readonly record struct Refusal(HandshakeRefusal Reason, long Id, string Error);
}
