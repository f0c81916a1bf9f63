using System.Buffers;
using System.Collections;
using System.Collections.Concurrent;
using System.Reflection;
using System.Text.Json;
using MessagePack;

namespace Camdoop.FrontEnd.Wire;

/// <summary>
/// MessagePack-CSharp as the front-end uses it: messages are <c>[MessagePackObject]</c> classes with string keys,
/// serialized with the standard resolver in untrusted-data mode (hash-collision-resistant collections, object
/// graphs at most <see cref="MaxObjectGraphDepth"/> deep). Every received message is first checked by
/// <see cref="WireValidator"/>, then deserialized straight from the bytes it arrived in.
/// </summary>
public static class FrontEndWire
{
    /// <summary>The deserializer's own depth bound; the validator already stops at <see cref="WireValidator.MaxDepth"/>.</summary>
    public const int MaxObjectGraphDepth = 32;

    public static MessagePackSerializerOptions Options { get; } = MessagePackSerializerOptions.Standard
        .WithSecurity(MessagePackSecurity.UntrustedData.WithMaximumObjectGraphDepth(MaxObjectGraphDepth));

    private static readonly ConcurrentDictionary<Type, IReadOnlyDictionary<string, Type>> Members = new();

    /// <summary>The message's bytes (no length prefix); its runtime type picks the formatter.</summary>
    public static byte[] Serialize(object message)
    {
        ArgumentNullException.ThrowIfNull(message);
        return MessagePackSerializer.Serialize(message.GetType(), message, Options);
    }

    /// <summary>Validates and reads one message (see <see cref="Read{T}"/> for the errors).</summary>
    public static T Decode<T>(in ReadOnlySequence<byte> body)
        where T : class
    {
        WireValidator.Validate(body);
        return Read<T>(body);
    }

    /// <summary>
    /// Reads a message that passed <see cref="WireValidator.Validate"/> as a <typeparamref name="T"/>. A field of the
    /// wrong type is a <see cref="FrontEndException"/> naming it ("field 'reducers' is missing or is not an integer").
    /// </summary>
    public static T Read<T>(in ReadOnlySequence<byte> body)
        where T : class
    {
        try
        {
            return MessagePackSerializer.Deserialize<T>(body, Options)
                ?? throw new FrontEndException("malformed message: a message must be a MessagePack map");
        }
        catch (MessagePackSerializationException e)
        {
            throw new FrontEndException(Explain(typeof(T), body, e), e);
        }
    }

    /// <summary>Finds the first field whose value does not deserialize as its member's type.</summary>
    private static string Explain(Type type, in ReadOnlySequence<byte> body, MessagePackSerializationException failure)
    {
        var members = Members.GetOrAdd(type, FindMembers);
        try
        {
            var reader = new MessagePackReader(body);
            int count = reader.ReadMapHeader();
            for (int i = 0; i < count; i++)
            {
                string? name = reader.ReadString();
                var value = reader.ReadRaw();
                if (name is not null && members.TryGetValue(name, out var memberType) && !Deserializes(memberType, value))
                {
                    return $"field '{name}' is missing or is not {Describe(memberType)}";
                }
            }
        }
        catch (Exception e) when (e is MessagePackSerializationException or EndOfStreamException)
        {
            // Not a map of fields after all; report the deserializer's own reason below.
        }
        Exception inner = failure;
        while (inner.InnerException is not null)
        {
            inner = inner.InnerException;
        }
        return $"malformed message: {inner.Message}";
    }

    private static bool Deserializes(Type type, ReadOnlySequence<byte> value)
    {
        try
        {
            MessagePackSerializer.Deserialize(type, value, Options);
            return true;
        }
        catch (MessagePackSerializationException)
        {
            return false;
        }
    }

    private static IReadOnlyDictionary<string, Type> FindMembers(Type type)
    {
        var members = new Dictionary<string, Type>(StringComparer.Ordinal);
        foreach (var property in type.GetProperties(BindingFlags.Public | BindingFlags.Instance))
        {
            if (property.GetCustomAttribute<KeyAttribute>()?.StringKey is { } key && property.CanWrite)
            {
                members[key] = property.PropertyType;
            }
        }
        return members;
    }

    private static string Describe(Type type)
    {
        type = Nullable.GetUnderlyingType(type) ?? type;
        return type switch
        {
            _ when type == typeof(string) => "a string",
            _ when type == typeof(bool) => "a boolean",
            _ when type == typeof(double) || type == typeof(float) => "a number",
            _ when type == typeof(long) || type == typeof(int) || type == typeof(ulong) || type == typeof(uint) => "an integer",
            _ when type == typeof(byte[]) || type == typeof(ReadOnlyMemory<byte>) => "binary data",
            _ when type == typeof(JsonElement) => "a JSON value",
            _ when typeof(IEnumerable).IsAssignableFrom(type) => "a list",
            _ => "a map",
        };
    }
}
