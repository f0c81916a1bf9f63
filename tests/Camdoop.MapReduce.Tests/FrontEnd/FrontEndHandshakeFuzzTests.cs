using System.Buffers;
using Camdoop.FrontEnd;
using Camdoop.FrontEnd.Wire;
using static Camdoop.MapReduce.Tests.FrontEnd.FrontEndAuthenticationTests;
using static Camdoop.MapReduce.Tests.FrontEnd.FrontEndServerTests;

namespace Camdoop.MapReduce.Tests.FrontEnd;

/// <summary>
/// The front-end's fuzz test carried to the handshake: hundreds of real connections each answer the challenge with
/// random bytes, a random body behind a valid length, or a correct "auth" with bytes flipped, cut off or appended.
/// Every connection ends authenticated (only when the proof survived the damage) or refused with a counted reason;
/// the server never fails a handler and serves a good client afterwards.
/// </summary>
public class FrontEndHandshakeFuzzTests
{
    [Fact]
    public void RandomAndDamagedHandshakesAreEitherRefusedAndCountedOrCarryAGoodProof()
    {
        const int Connections = 600;
        using var server = StartServer(new FrontEndServerOptions { HandshakeTimeout = TimeSpan.FromSeconds(5) });
        var rng = new Random(34);
        int authenticated = 0;
        int refused = 0;
        for (int i = 0; i < Connections; i++)
        {
            using var raw = FrontEndClient.ConnectWithoutKey(Address(server));
            byte[] good = GoodAuth(ReadChallenge(raw));
            byte[] sent = (i % 4) switch
            {
                0 => RandomBytes(rng, rng.Next(1, 80)),
                1 => MessageFraming.Prefix(RandomBytes(rng, rng.Next(0, 120))),
                2 => Flip(rng, good),
                _ => rng.Next(2) == 0 ? good[..rng.Next(good.Length)] : [.. good, .. RandomBytes(rng, rng.Next(1, 40))],
            };
            raw.SendRaw(sent);
            raw.CloseSending();
            var first = ReadOrNull(raw);
            // The server's answer to the handshake: its proof (ok) or one error; nothing else, never silence.
            Assert.True(first is not null, $"connection {i}: no answer to the handshake");
            if (first.Ok)
            {
                Assert.True(i % 4 >= 2, $"connection {i}: random bytes were taken for a proof");
                authenticated++;
            }
            else
            {
                Assert.False(string.IsNullOrEmpty(first.Error));
                Assert.DoesNotContain('\n', first.Error);
                refused++;
            }
        }
        WaitFor(() => server.ConnectionsAuthenticated + server.RefusedNoHandshake + server.RefusedWrongKey + server.RefusedMalformedHandshake == Connections);
        Assert.Equal(authenticated, server.ConnectionsAuthenticated);
        Assert.Equal(refused, server.RefusedNoHandshake + server.RefusedWrongKey + server.RefusedMalformedHandshake);
        // The damage reached every kind of refusal, and some handshakes survived it (an "id" byte flipped, bytes appended).
        Assert.True(server.RefusedWrongKey > 0 && server.RefusedMalformedHandshake > 0 && authenticated > 0, $"wrong key {server.RefusedWrongKey}, malformed {server.RefusedMalformedHandshake}, authenticated {authenticated}");
        Assert.Equal(0, server.HandlerFailures);
        using var next = Connect(server);
        Assert.Equal("still serving", next.Call(new EchoRequest { Text = "still serving" }).Text);
    }

    private static byte[] RandomBytes(Random rng, int n)
    {
        var bytes = new byte[n];
        rng.NextBytes(bytes);
        return bytes;
    }

    private static byte[] Flip(Random rng, byte[] good)
    {
        var bytes = (byte[])good.Clone();
        for (int flips = rng.Next(1, 4); flips > 0; flips--)
        {
            bytes[rng.Next(bytes.Length)] ^= (byte)rng.Next(1, 256);
        }
        return bytes;
    }

    /// <summary>The next message as a reply, or null once the server has closed (or reset) the connection.</summary>
    private static ReplyEnvelope? ReadOrNull(FrontEndClient raw)
    {
        try
        {
            return raw.ReadMessage() is { } body ? FrontEndWire.Decode<ReplyEnvelope>(new ReadOnlySequence<byte>(body)) : null;
        }
        catch (IOException)
        {
            return null;
        }
    }
}
