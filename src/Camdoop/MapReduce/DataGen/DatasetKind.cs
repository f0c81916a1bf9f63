namespace Camdoop.MapReduce.DataGen;

/// <summary>The data sets <see cref="DatasetGenerator"/> makes, each for one built-in job.</summary>
public enum DatasetKind
{
    /// <summary>Random keys at an output ratio S, for the synthetic job.</summary>
    Synthetic,

    /// <summary>100-byte Indy records, for the sort job.</summary>
    Sort,

    /// <summary>Zipf text, for WordCount.</summary>
    Text,

    /// <summary>"item TAB score" lines, for TopK.</summary>
    TopK,
}
