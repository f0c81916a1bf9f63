using System.Globalization;

namespace Camdoop.Monitoring.Queries;

internal enum TokenKind
{
    Word,
    Number,
    String,
    Symbol,
    End,
}

/// <summary>A token and where it starts (1-based character), for error messages.</summary>
internal readonly record struct Token(TokenKind Kind, string Text, int Position)
{
    public bool Is(string word) =>
        Kind is TokenKind.Word or TokenKind.Symbol && string.Equals(Text, word, StringComparison.OrdinalIgnoreCase);

    public string Describe() => Kind switch
    {
        TokenKind.End => "the end of the query",
        TokenKind.String => $"'{Text}' (a string)",
        _ => $"'{Text}'",
    };

    public double NumberValue => double.Parse(Text, NumberStyles.Float, CultureInfo.InvariantCulture);
}

/// <summary>Splits a query into words, numbers, quoted strings and symbols.</summary>
internal static class QueryLexer
{
    private static readonly string[] Symbols = ["<=", ">=", "!=", "<>", "=", "<", ">", "(", ")", ",", "*"];

    public static List<Token> Tokens(string text)
    {
        var tokens = new List<Token>();
        int i = 0;
        while (i < text.Length)
        {
            char c = text[i];
            if (char.IsWhiteSpace(c))
            {
                i++;
                continue;
            }
            int start = i;
            if (char.IsLetter(c) || c == '_')
            {
                while (i < text.Length && (char.IsLetterOrDigit(text[i]) || text[i] == '_'))
                {
                    i++;
                }
                tokens.Add(new Token(TokenKind.Word, text[start..i], start + 1));
            }
            else if (char.IsAsciiDigit(c) || (c is '-' or '.' && i + 1 < text.Length && char.IsAsciiDigit(text[i + 1])))
            {
                i++;
                while (i < text.Length && (char.IsAsciiDigit(text[i]) || text[i] == '.'))
                {
                    i++;
                }
                string number = text[start..i];
                if (!double.TryParse(number, NumberStyles.Float, CultureInfo.InvariantCulture, out _))
                {
                    throw new QueryException($"malformed query at character {start + 1}: '{number}' is not a number");
                }
                tokens.Add(new Token(TokenKind.Number, number, start + 1));
            }
            else if (c is '\'' or '"')
            {
                int close = text.IndexOf(c, i + 1);
                if (close < 0)
                {
                    throw new QueryException($"malformed query at character {start + 1}: the string has no closing {c}");
                }
                tokens.Add(new Token(TokenKind.String, text[(i + 1)..close], start + 1));
                i = close + 1;
            }
            else
            {
                string? symbol = Symbols.FirstOrDefault(s => string.CompareOrdinal(text, i, s, 0, s.Length) == 0);
                if (symbol is null)
                {
                    throw new QueryException($"malformed query at character {start + 1}: unexpected '{c}'");
                }
                tokens.Add(new Token(TokenKind.Symbol, symbol, start + 1));
                i += symbol.Length;
            }
        }
        tokens.Add(new Token(TokenKind.End, "", text.Length + 1));
        return tokens;
    }
}
