using System.Buffers;
using System.Text.Json;
using MessagePack;
using MessagePack.Formatters;

namespace Camdoop.FrontEnd.Wire;

/// <summary>
/// A JSON document as plain MessagePack: objects as maps with string keys, arrays, strings, integers (int64, or
/// uint64 above it), other numbers as float64, booleans and nil. Reading counts depth like every formatter in
/// untrusted-data mode; binary and extension values are refused.
/// </summary>
public sealed class JsonElementFormatter : IMessagePackFormatter<JsonElement>
{
    public void Serialize(ref MessagePackWriter writer, JsonElement value, MessagePackSerializerOptions options)
    {
        switch (value.ValueKind)
        {
            case JsonValueKind.Object:
                writer.WriteMapHeader(value.EnumerateObject().Count());
                foreach (var property in value.EnumerateObject())
                {
                    writer.Write(property.Name);
                    Serialize(ref writer, property.Value, options);
                }
                break;
            case JsonValueKind.Array:
                writer.WriteArrayHeader(value.GetArrayLength());
                foreach (var item in value.EnumerateArray())
                {
                    Serialize(ref writer, item, options);
                }
                break;
            case JsonValueKind.String:
                writer.Write(value.GetString());
                break;
            case JsonValueKind.Number when value.TryGetInt64(out long l):
                writer.Write(l);
                break;
            case JsonValueKind.Number when value.TryGetUInt64(out ulong u):
                writer.Write(u);
                break;
            case JsonValueKind.Number:
                writer.Write(value.GetDouble());
                break;
            case JsonValueKind.True:
                writer.Write(true);
                break;
            case JsonValueKind.False:
                writer.Write(false);
                break;
            default:
                writer.WriteNil();
                break;
        }
    }

    public JsonElement Deserialize(ref MessagePackReader reader, MessagePackSerializerOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        var buffer = new ArrayBufferWriter<byte>();
        using (var json = new Utf8JsonWriter(buffer))
        {
            Copy(ref reader, json, options);
        }
        using var document = JsonDocument.Parse(buffer.WrittenMemory);
        return document.RootElement.Clone();
    }

    private static void Copy(ref MessagePackReader reader, Utf8JsonWriter json, MessagePackSerializerOptions options)
    {
        switch (reader.NextMessagePackType)
        {
            case MessagePackType.Map:
                options.Security.DepthStep(ref reader);
                json.WriteStartObject();
                for (int n = reader.ReadMapHeader(); n > 0; n--)
                {
                    json.WritePropertyName(reader.ReadString() ?? throw new MessagePackSerializationException("a JSON object's key is nil"));
                    Copy(ref reader, json, options);
                }
                json.WriteEndObject();
                reader.Depth--;
                break;
            case MessagePackType.Array:
                options.Security.DepthStep(ref reader);
                json.WriteStartArray();
                for (int n = reader.ReadArrayHeader(); n > 0; n--)
                {
                    Copy(ref reader, json, options);
                }
                json.WriteEndArray();
                reader.Depth--;
                break;
            case MessagePackType.String:
                json.WriteStringValue(reader.ReadString());
                break;
            case MessagePackType.Integer when reader.NextCode == MessagePackCode.UInt64:
                json.WriteNumberValue(reader.ReadUInt64());
                break;
            case MessagePackType.Integer:
                json.WriteNumberValue(reader.ReadInt64());
                break;
            case MessagePackType.Float:
                double d = reader.ReadDouble();
                json.WriteNumberValue(double.IsFinite(d) ? d : throw new MessagePackSerializationException("a JSON number must be finite"));
                break;
            case MessagePackType.Boolean:
                json.WriteBooleanValue(reader.ReadBoolean());
                break;
            case MessagePackType.Nil:
                reader.ReadNil();
                json.WriteNullValue();
                break;
            default:
                throw new MessagePackSerializationException($"a JSON value cannot be MessagePack {reader.NextMessagePackType}");
        }
    }
}
