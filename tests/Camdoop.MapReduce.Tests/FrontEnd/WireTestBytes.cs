using MessagePack;

namespace Camdoop.MapReduce.Tests.FrontEnd;

/// <summary>Hand-made message bodies: any field names and value types, as a client that does not follow the protocol would send.</summary>
internal static class WireTestBytes
{
    /// <summary>A map of the given fields in order (values: null, bool, long, double, string, byte[], lists, nested dictionaries).</summary>
    public static byte[] Map(params (string Key, object? Value)[] fields)
    {
        var map = new Dictionary<string, object?>(StringComparer.Ordinal);
        foreach (var (key, value) in fields)
        {
            map.Add(key, value);
        }
        return MessagePackSerializer.Serialize(map, MessagePackSerializerOptions.Standard);
    }

    /// <summary>{"x": value} where value is given as hex MessagePack.</summary>
    public static byte[] MapWithRawValue(string hex) => [0x81, 0xa1, (byte)'x', .. Convert.FromHexString(hex)];
}
