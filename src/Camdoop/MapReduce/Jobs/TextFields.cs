using System.Buffers.Text;

namespace Camdoop.MapReduce.Jobs;

/// <summary>Parsing of "text TAB non-negative-integer" lines shared by the text jobs.</summary>
public static class TextFields
{
    public static bool TrySplitKeyNumber(ReadOnlySpan<byte> line, out ReadOnlySpan<byte> text, out ulong number)
    {
        number = 0;
        int tab = line.IndexOf((byte)'\t');
        text = tab < 0 ? default : line[..tab];
        if (tab < 0)
        {
            return false;
        }
        var digits = line[(tab + 1)..];
        return digits.Length > 0
            && Utf8Parser.TryParse(digits, out number, out int consumed)
            && consumed == digits.Length
            && digits[0] is >= (byte)'0' and <= (byte)'9';
    }
}
