namespace Camdoop.MapReduce.DataGen;

/// <summary>
/// The most frequent words of written English, most frequent first (the order of the common frequency counts of
/// large English corpora; a ranking is a fact, not a text). The demo's corpus draws its most frequent words from
/// these, so its top ten read like a word count of English.
/// </summary>
public static class EnglishWords
{
    public static IReadOnlyList<string> ByFrequency { get; } =
    [
        "the", "of", "and", "to", "a", "in", "is", "that", "for", "it", "as", "was", "with", "be", "by", "on", "not",
        "he", "this", "are", "or", "his", "from", "at", "which", "but", "have", "an", "had", "they", "you", "were",
        "their", "one", "all", "we", "can", "her", "has", "there", "been", "if", "more", "when", "will", "would",
        "who", "so", "no", "she", "other", "its", "may", "these", "what", "them", "than", "some", "him", "time",
        "into", "only", "do", "such", "my", "new", "about", "out", "also", "two", "any", "up", "first", "could",
        "our", "then", "most", "see", "me", "should", "after", "said", "your", "very", "between", "made", "many",
        "over", "like", "those", "did", "now", "even", "well", "where", "must", "people", "through", "how", "same",
        "work", "being", "because", "man", "life", "before", "each", "much", "under", "years", "way", "great",
        "state", "both", "use", "upon", "own", "used", "however", "us", "part", "good", "world", "make", "three",
        "while", "long", "day", "without", "just", "men", "general", "during", "another", "little", "found", "here",
        "system", "does", "down", "number", "case", "might", "still", "given", "year", "last", "take", "government",
        "since", "high", "form", "too", "place", "second", "every", "small", "know", "public", "water", "house",
        "old", "back", "called", "end", "come", "left", "against", "right", "thought", "few", "name", "hand", "set",
        "point", "order", "country", "school", "mind", "family", "think", "again", "never", "went", "city", "around",
        "power", "group", "children", "word", "fact", "night", "light", "want", "change", "war", "study", "line",
        "away", "early", "body", "head", "side", "land", "need", "question", "money", "book", "story", "history",
        "problem", "young", "important", "open", "often", "already", "river",
    ];
}
