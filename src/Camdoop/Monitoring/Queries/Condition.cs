using Camdoop.Monitoring.Tables;

namespace Camdoop.Monitoring.Queries;

/// <summary>A query's where clause: comparisons of a column with a constant, joined by and, or and not.</summary>
public abstract record Condition
{
    public abstract bool Holds(QueryValue[] row);
}

public enum CompareOp
{
    Equal,
    NotEqual,
    Less,
    LessOrEqual,
    Greater,
    GreaterOrEqual,
}

public sealed record Comparison(int Column, CompareOp Op, QueryValue Constant) : Condition
{
    public override bool Holds(QueryValue[] row)
    {
        var value = row[Column];
        if (value.IsText && Constant.IsText && Op is CompareOp.Equal or CompareOp.NotEqual)
        {
            // Names are compared as users type them: "+x" finds port +X.
            bool same = string.Equals(value.Text, Constant.Text, StringComparison.OrdinalIgnoreCase);
            return Op == CompareOp.Equal ? same : !same;
        }
        int c = value.CompareTo(Constant);
        return Op switch
        {
            CompareOp.Equal => c == 0,
            CompareOp.NotEqual => c != 0,
            CompareOp.Less => c < 0,
            CompareOp.LessOrEqual => c <= 0,
            CompareOp.Greater => c > 0,
            _ => c >= 0,
        };
    }
}

public sealed record And(Condition Left, Condition Right) : Condition
{
    public override bool Holds(QueryValue[] row) => Left.Holds(row) && Right.Holds(row);
}

public sealed record Or(Condition Left, Condition Right) : Condition
{
    public override bool Holds(QueryValue[] row) => Left.Holds(row) || Right.Holds(row);
}

public sealed record Not(Condition Inner) : Condition
{
    public override bool Holds(QueryValue[] row) => !Inner.Holds(row);
}
