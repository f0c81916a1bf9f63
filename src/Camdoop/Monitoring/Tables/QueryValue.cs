using System.Globalization;

namespace Camdoop.Monitoring.Tables;

/// <summary>One cell of a monitoring table or query result: a number, a text, or nothing (an empty group's min).</summary>
public readonly struct QueryValue : IEquatable<QueryValue>, IComparable<QueryValue>
{
    private QueryValue(double number, string? text, bool isNull)
    {
        Number = number;
        Text = text;
        IsNull = isNull;
    }

    public double Number { get; }

    public string? Text { get; }

    public bool IsNull { get; }

    public bool IsText => Text is not null;

    public static QueryValue Null => new(0, null, true);

    public static QueryValue Of(double number) => double.IsNaN(number) ? Null : new(number, null, false);

    public static QueryValue Of(string text) => new(0, text ?? throw new ArgumentNullException(nameof(text)), false);

    public static implicit operator QueryValue(double number) => Of(number);

    public static implicit operator QueryValue(string text) => Of(text);

    public bool Equals(QueryValue other) =>
        IsNull == other.IsNull && string.Equals(Text, other.Text, StringComparison.Ordinal) && (IsText || IsNull || Number.Equals(other.Number));

    public override bool Equals(object? obj) => obj is QueryValue v && Equals(v);

    public override int GetHashCode() => IsNull ? 0 : IsText ? StringComparer.Ordinal.GetHashCode(Text!) : Number.GetHashCode();

    /// <summary>Nulls first, then numbers, then texts (ordinal).</summary>
    public int CompareTo(QueryValue other)
    {
        int rank = Rank.CompareTo(other.Rank);
        return rank != 0 ? rank : IsText ? string.CompareOrdinal(Text, other.Text) : Number.CompareTo(other.Number);
    }

    private int Rank => IsNull ? 0 : IsText ? 2 : 1;

    /// <summary>As a user reads it: integers without a fraction, other numbers with up to six digits after the point.</summary>
    public override string ToString() =>
        IsNull ? "" : IsText ? Text! : Number == Math.Floor(Number) && Math.Abs(Number) < 1e15
            ? Number.ToString("0", CultureInfo.InvariantCulture)
            : Number.ToString("0.######", CultureInfo.InvariantCulture);

    public static bool operator ==(QueryValue left, QueryValue right) => left.Equals(right);

    public static bool operator !=(QueryValue left, QueryValue right) => !left.Equals(right);

    public static bool operator <(QueryValue left, QueryValue right) => left.CompareTo(right) < 0;

    public static bool operator <=(QueryValue left, QueryValue right) => left.CompareTo(right) <= 0;

    public static bool operator >(QueryValue left, QueryValue right) => left.CompareTo(right) > 0;

    public static bool operator >=(QueryValue left, QueryValue right) => left.CompareTo(right) >= 0;
}
