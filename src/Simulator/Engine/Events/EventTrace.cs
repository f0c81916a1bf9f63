using System.Globalization;

namespace Camdoop.Simulator.Events;

/// <summary>
/// Folds every processed event (time, kind, node, port, frame length) into a 64-bit hash, so two runs can be
/// compared for determinism in O(1) memory; optionally keeps the first events as text for diagnosing a divergence.
/// </summary>
public sealed class EventTrace
{
    private readonly List<string> _lines = [];

    public EventTrace(int maxLines = 0)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(maxLines);
        MaxLines = maxLines;
    }

    public ulong Hash { get; private set; } = 0xCBF29CE484222325UL;

    public long Events { get; private set; }

    public int MaxLines { get; }

    /// <summary>The first <see cref="MaxLines"/> events, one per line.</summary>
    public IReadOnlyList<string> Lines => _lines;

    public void Record(long time, EventKind kind, int node, int port, int frameLength)
    {
        ulong h = Mix(Hash, (ulong)time);
        ulong packed = (byte)kind | ((ulong)(byte)port << 8) | ((ulong)(ushort)frameLength << 16) | ((ulong)(uint)node << 32);
        Hash = Mix(h, packed);
        Events++;
        if (_lines.Count < MaxLines)
        {
            _lines.Add(string.Create(CultureInfo.InvariantCulture, $"{time} {kind} node={node} port={port} len={frameLength}"));
        }
    }

    private static ulong Mix(ulong h, ulong v)
    {
        h ^= v;
        h *= 0x9E3779B97F4A7C15UL;
        return h ^ (h >> 29);
    }
}
