using System.Buffers;
using System.Collections;
using System.Globalization;

namespace Camdoop.MapReduce.FrontEnd.Wire;

/// <summary>
/// One front-end message: a MessagePack map with string keys. Values are null, bool, long, double, string, byte[],
/// lists (<see cref="IReadOnlyList{T}"/> of values) and nested messages. Decoding is for untrusted bytes: the
/// reader bounds every length, nesting is limited to <see cref="MaxDepth"/>, and any violation is an
/// <see cref="InvalidDataException"/>. Typed getters fail with a <see cref="FrontEndException"/> naming the field.
/// </summary>
public sealed class WireMessage : IEnumerable<KeyValuePair<string, object?>>
{
    public const int MaxDepth = 16;

    private readonly Dictionary<string, object?> _fields = new(StringComparer.Ordinal);

    public WireMessage()
    {
    }

    public WireMessage(string op)
    {
        _fields["op"] = op;
    }

    public int Count => _fields.Count;

    /// <summary>The operation of a request ("op"), or null.</summary>
    public string? Op => _fields.GetValueOrDefault("op") as string;

    public object? this[string name]
    {
        get => _fields.GetValueOrDefault(name);
        set => _fields[name] = value;
    }

    /// <summary>Collection-initializer support: <c>new WireMessage("ls") { { "name", "x" } }</c>.</summary>
    public void Add(string name, object? value) => _fields[name] = value;

    public WireMessage Set(string name, object? value)
    {
        _fields[name] = value;
        return this;
    }

    public bool Has(string name) => _fields.TryGetValue(name, out var v) && v is not null;

    public string GetString(string name) =>
        _fields.GetValueOrDefault(name) as string ?? throw Missing(name, "a string");

    public string? GetOptionalString(string name) => _fields.GetValueOrDefault(name) switch
    {
        null => null,
        string s => s,
        _ => throw Missing(name, "a string"),
    };

    public long GetInt64(string name) => _fields.GetValueOrDefault(name) switch
    {
        long v => v,
        _ => throw Missing(name, "an integer"),
    };

    public long GetInt64(string name, long defaultValue) => _fields.GetValueOrDefault(name) switch
    {
        null => defaultValue,
        long v => v,
        _ => throw Missing(name, "an integer"),
    };

    /// <summary>An integer field within [<paramref name="min"/>, <paramref name="max"/>].</summary>
    public int GetInt32(string name, int min, int max)
    {
        long v = GetInt64(name);
        return v >= min && v <= max ? (int)v
            : throw new FrontEndException(string.Create(CultureInfo.InvariantCulture, $"field '{name}' must be between {min} and {max}, not {v}"));
    }

    public double GetDouble(string name) => _fields.GetValueOrDefault(name) switch
    {
        double d => d,
        long l => l,
        _ => throw Missing(name, "a number"),
    };

    public bool GetBoolean(string name, bool defaultValue = false) => _fields.GetValueOrDefault(name) switch
    {
        null => defaultValue,
        bool b => b,
        _ => throw Missing(name, "a boolean"),
    };

    public byte[] GetBinary(string name) => _fields.GetValueOrDefault(name) as byte[] ?? throw Missing(name, "binary data");

    public IReadOnlyList<object?> GetList(string name) =>
        _fields.GetValueOrDefault(name) as IReadOnlyList<object?> ?? throw Missing(name, "a list");

    public WireMessage GetMessage(string name) => _fields.GetValueOrDefault(name) as WireMessage ?? throw Missing(name, "a map");

    public IEnumerator<KeyValuePair<string, object?>> GetEnumerator() => _fields.GetEnumerator();

    IEnumerator IEnumerable.GetEnumerator() => GetEnumerator();

    public void WriteTo(MessagePackWriter writer)
    {
        ArgumentNullException.ThrowIfNull(writer);
        WriteMap(writer, this, 0);
    }

    public byte[] Encode()
    {
        var buffer = new ArrayBufferWriter<byte>(256);
        WriteTo(new MessagePackWriter(buffer));
        return buffer.WrittenSpan.ToArray();
    }

    /// <summary>Decodes one whole message; the bytes must hold exactly one map.</summary>
    public static WireMessage Decode(ReadOnlySpan<byte> bytes)
    {
        var reader = new MessagePackReader(bytes);
        if (reader.End || reader.PeekType() != MessagePackType.Map)
        {
            throw new InvalidDataException("malformed message: a message must be a MessagePack map");
        }
        var message = ReadMap(ref reader, 0);
        if (!reader.End)
        {
            throw new InvalidDataException("malformed message: bytes after the end of the map");
        }
        return message;
    }

    public override string ToString() => string.Join(", ", _fields.Select(f => $"{f.Key}={Describe(f.Value)}"));

    private static string Describe(object? value) => value switch
    {
        null => "nil",
        byte[] b => $"<{b.Length} bytes>",
        string s => s.Length > 60 ? s[..60] + "..." : s,
        IReadOnlyList<object?> l => $"[{l.Count} items]",
        WireMessage m => "{" + m + "}",
        IFormattable f => f.ToString(null, CultureInfo.InvariantCulture),
        _ => value.ToString() ?? "",
    };

    private static FrontEndException Missing(string name, string what) => new($"field '{name}' is missing or is not {what}");

    private static void WriteMap(MessagePackWriter writer, WireMessage map, int depth)
    {
        writer.WriteMapHeader(map._fields.Count);
        foreach (var (key, value) in map._fields)
        {
            writer.Write(key);
            WriteValue(writer, value, depth + 1);
        }
    }

    private static void WriteValue(MessagePackWriter writer, object? value, int depth)
    {
        if (depth > MaxDepth)
        {
            throw new InvalidOperationException($"message nesting deeper than {MaxDepth}");
        }
        switch (value)
        {
            case null:
                writer.WriteNil();
                break;
            case bool b:
                writer.Write(b);
                break;
            case string s:
                writer.Write(s);
                break;
            case byte[] bytes:
                writer.WriteBinary(bytes);
                break;
            case ReadOnlyMemory<byte> memory:
                writer.WriteBinary(memory.Span);
                break;
            case ArraySegment<byte> segment:
                writer.WriteBinary(segment);
                break;
            case int i:
                writer.Write((long)i);
                break;
            case long l:
                writer.Write(l);
                break;
            case uint u:
                writer.Write((ulong)u);
                break;
            case ulong u:
                writer.Write(u);
                break;
            case double d:
                writer.Write(d);
                break;
            case float f:
                writer.Write((double)f);
                break;
            case WireMessage m:
                WriteMap(writer, m, depth);
                break;
            case IEnumerable<KeyValuePair<string, object?>> dictionary:
                var fields = dictionary.ToList();
                writer.WriteMapHeader(fields.Count);
                foreach (var (key, v) in fields)
                {
                    writer.Write(key);
                    WriteValue(writer, v, depth + 1);
                }
                break;
            case IEnumerable items:
                var list = items.Cast<object?>().ToList();
                writer.WriteArrayHeader(list.Count);
                foreach (var item in list)
                {
                    WriteValue(writer, item, depth + 1);
                }
                break;
            default:
                throw new InvalidOperationException($"cannot encode a {value.GetType().Name} in a front-end message");
        }
    }

    private static WireMessage ReadMap(ref MessagePackReader reader, int depth)
    {
        int count = reader.ReadMapHeader();
        var map = new WireMessage();
        for (int i = 0; i < count; i++)
        {
            if (reader.PeekType() != MessagePackType.String)
            {
                throw new InvalidDataException("malformed message: map keys must be strings");
            }
            string key = reader.ReadString()!;
            map._fields[key] = ReadValue(ref reader, depth + 1);
        }
        return map;
    }

    private static object? ReadValue(ref MessagePackReader reader, int depth)
    {
        if (depth > MaxDepth)
        {
            throw new InvalidDataException($"malformed message: nesting deeper than {MaxDepth}");
        }
        switch (reader.PeekType())
        {
            case MessagePackType.Nil:
                reader.TryReadNil();
                return null;
            case MessagePackType.Boolean:
                return reader.ReadBoolean();
            case MessagePackType.Integer:
                try
                {
                    return reader.ReadInt64();
                }
                catch (OverflowException)
                {
                    throw new InvalidDataException("malformed message: an integer does not fit 64 signed bits");
                }
            case MessagePackType.Float:
                return reader.ReadDouble();
            case MessagePackType.String:
                return reader.ReadString();
            case MessagePackType.Binary:
                return reader.ReadBinary().ToArray();
            case MessagePackType.Array:
                int n = reader.ReadArrayHeader();
                var list = new List<object?>(Math.Min(n, 1024));
                for (int i = 0; i < n; i++)
                {
                    list.Add(ReadValue(ref reader, depth + 1));
                }
                return list;
            case MessagePackType.Map:
                return ReadMap(ref reader, depth);
            default:
                throw new InvalidDataException("malformed message: unsupported MessagePack type (extension types are refused)");
        }
    }
}
