using System.Globalization;
using System.Net.Security;
using System.Security.Authentication;
using Camdoop.FrontEnd.Wire;
using Camdoop.Runtime.Security;

namespace Camdoop.FrontEnd;

// Authentication: every connection is mutual TLS 1.3 under the cluster CA before its first request is read.
public sealed partial class FrontEndServer
{
    private long _authenticated;
    private long _noHandshake;
    private long _badCertificate;
    private long _malformedHandshake;

    /// <summary>Connections whose client showed a client certificate of this cluster's CA.</summary>
    public long ConnectionsAuthenticated => Interlocked.Read(ref _authenticated);

    /// <summary>Connections refused because the client did not finish a TLS handshake in time, or left during it.</summary>
    public long RefusedNoHandshake => Interlocked.Read(ref _noHandshake);

    /// <summary>Connections refused for their certificate: none, another CA's, expired, revoked, or a node's.</summary>
    public long RefusedCertificate => Interlocked.Read(ref _badCertificate);

    /// <summary>Connections refused because what the client sent was not TLS 1.3 (or not TLS at all).</summary>
    public long RefusedMalformedHandshake => Interlocked.Read(ref _malformedHandshake);

    /// <summary>
    /// Greets the client in clear ("start TLS"), runs the TLS handshake as the server within
    /// <see cref="FrontEndServerOptions.HandshakeTimeout"/>, and checks the client's certificate. The TLS stream and
    /// who the client is, or null when it was refused: counted by reason, logged at a bounded rate, and (once TLS is
    /// up) told why; the caller closes.
    /// </summary>
    private async Task<(SslStream Stream, PeerIdentity Client)?> AuthenticateAsync(Stream plain, FrontEndReplies clear, string remote, CancellationToken token)
    {
        var credentials = _credentials.Current;
        await clear.SendRawAsync(new TlsGreeting { Protocol = TlsGreeting.CurrentProtocol }, token).ConfigureAwait(false);
        var ssl = new SslStream(plain, leaveInnerStreamOpen: true);
        using var deadline = CancellationTokenSource.CreateLinkedTokenSource(token);
        deadline.CancelAfter(_options.HandshakeTimeout);
        string? failure = null;
        try
        {
            await ssl.AuthenticateAsServerAsync(credentials.ServerOptions(), deadline.Token).ConfigureAwait(false);
        }
        catch (OperationCanceledException) when (!token.IsCancellationRequested)
        {
            Interlocked.Increment(ref _noHandshake);
            failure = $"no TLS handshake within {_options.HandshakeTimeout.TotalSeconds.ToString("0.###", CultureInfo.InvariantCulture)} s";
        }
        catch (AuthenticationException e)
        {
            Interlocked.Increment(ref _malformedHandshake);
            failure = $"TLS handshake failed: {e.Message}";
        }
        catch (IOException e)
        {
            Interlocked.Increment(ref _noHandshake);
            failure = $"the connection closed during the TLS handshake ({e.Message})";
        }
        if (failure is not null)
        {
            _refusals.Write($"front-end: refused {remote}: {failure}");
            await ssl.DisposeAsync().ConfigureAwait(false);
            return null;
        }
        if (credentials.WhyRefused(ssl.RemoteCertificate, CertificateRole.Client, out var client) is { } refused)
        {
            Interlocked.Increment(ref _badCertificate);
            _refusals.Write($"front-end: refused {remote}: {refused}");
            try
            {
                await new FrontEndReplies(ssl, _options.WriteTimeout, () => { }).SendRawAsync(ReplyEnvelope.Failure(0, $"client certificate refused: {refused}"), token).ConfigureAwait(false);
            }
            catch (IOException)
            {
                // The client is gone already; it was refused all the same.
            }
            await ssl.DisposeAsync().ConfigureAwait(false);
            return null;
        }
        Interlocked.Increment(ref _authenticated);
        return (ssl, client!);
    }
}
