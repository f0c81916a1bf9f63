using System.Text.Json;

namespace Camdoop.MapReduce.FrontEnd.Wire;

/// <summary>Converts between JSON documents and front-end message values (status reports travel this way).</summary>
public static class WireJson
{
    /// <summary>A JSON value as a message value: objects become <see cref="WireMessage"/>s, arrays lists, numbers long or double.</summary>
    public static object? FromJson(JsonElement element) => element.ValueKind switch
    {
        JsonValueKind.Object => ToMessage(element),
        JsonValueKind.Array => element.EnumerateArray().Select(FromJson).ToList(),
        JsonValueKind.String => element.GetString(),
        JsonValueKind.Number => element.TryGetInt64(out long l) ? (object)l : element.GetDouble(),
        JsonValueKind.True => true,
        JsonValueKind.False => false,
        _ => null,
    };

    public static WireMessage ToMessage(JsonElement element)
    {
        var message = new WireMessage();
        foreach (var property in element.EnumerateObject())
        {
            message[property.Name] = FromJson(property.Value);
        }
        return message;
    }

    /// <summary>Writes a message value as JSON (binary values as base64).</summary>
    public static void Write(Utf8JsonWriter writer, object? value)
    {
        ArgumentNullException.ThrowIfNull(writer);
        switch (value)
        {
            case null:
                writer.WriteNullValue();
                break;
            case bool b:
                writer.WriteBooleanValue(b);
                break;
            case long l:
                writer.WriteNumberValue(l);
                break;
            case double d:
                writer.WriteNumberValue(d);
                break;
            case string s:
                writer.WriteStringValue(s);
                break;
            case byte[] bytes:
                writer.WriteBase64StringValue(bytes);
                break;
            case WireMessage m:
                writer.WriteStartObject();
                foreach (var (key, v) in m)
                {
                    writer.WritePropertyName(key);
                    Write(writer, v);
                }
                writer.WriteEndObject();
                break;
            case IReadOnlyList<object?> list:
                writer.WriteStartArray();
                foreach (var item in list)
                {
                    Write(writer, item);
                }
                writer.WriteEndArray();
                break;
            default:
                writer.WriteStringValue(value.ToString());
                break;
        }
    }

    public static string ToJson(object? value, bool indented = true)
    {
        using var stream = new MemoryStream();
        using (var writer = new Utf8JsonWriter(stream, new JsonWriterOptions { Indented = indented }))
        {
            Write(writer, value);
        }
        return System.Text.Encoding.UTF8.GetString(stream.ToArray());
    }
}
