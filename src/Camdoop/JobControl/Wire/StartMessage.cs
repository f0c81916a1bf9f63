using Camdoop.KeyRouting;
using Camdoop.MapReduce.Jobs.Control;
using Camdoop.Runtime.Topology;

namespace Camdoop.JobControl.Wire;

/// <summary>
/// The body of a <see cref="JobMessage.Start"/>: the attempt's description, the output dataset (if any), and the
/// whole directory of map tasks (which chunks each host maps), so that whoever a lost server's map task remaps to
/// knows to run it again, and every host knows who takes part.
/// </summary>
public sealed record StartMessage(JobDescription Description, string? OutputDataset, SortedDictionary<int, IReadOnlyList<Key>> Directory)
{
    public byte[] Encode()
    {
        var w = new ControlWire.Writer(256 + (Directory.Count * 8) + (Directory.Values.Sum(c => c.Count) * Key.Size));
        w.Bytes(JobDescriptionCodec.Encode(Description));
        w.OptionalString(OutputDataset);
        w.U32((uint)Directory.Count);
        foreach (var (host, chunks) in Directory)
        {
            w.U32((uint)host);
            w.U32((uint)chunks.Count);
            foreach (var id in chunks)
            {
                w.Key(id);
            }
        }
        return w.ToArray();
    }

    /// <summary>Decodes a start; null with the reason when it is not one (malformed, hosts off <paramref name="hosts"/>).</summary>
    public static StartMessage? Decode(ReadOnlySpan<byte> body, Torus hosts, out string? error)
    {
        ArgumentNullException.ThrowIfNull(hosts);
        var r = new ControlWire.Reader(body);
        var encoded = r.Bytes();
        string? output = r.OptionalString();
        int count = r.Count(8);
        var directory = new SortedDictionary<int, IReadOnlyList<Key>>();
        for (int i = 0; i < count && r.Ok; i++)
        {
            int host = (int)r.U32();
            int chunks = r.Count(Key.Size);
            var ids = new Key[chunks];
            for (int k = 0; k < chunks; k++)
            {
                ids[k] = r.Key();
            }
            if ((uint)host >= (uint)hosts.Count || !directory.TryAdd(host, ids))
            {
                error = "a host off the torus, or named twice";
                return null;
            }
        }
        if (!r.Ok || !r.AtEnd)
        {
            error = "truncated or trailing bytes";
            return null;
        }
        if (!JobDescriptionCodec.TryDecode(encoded, out var description, out error))
        {
            return null;
        }
        return new StartMessage(description!, output, directory);
    }
}
