namespace Camdoop.Experiments;

/// <summary>What a simulated job runs on: a generated data set with its built-in job, or the user's own files.</summary>
public enum Workload
{
    /// <summary>Random keys at an output ratio S, the synthetic job (the Camdoop paper, §5.2).</summary>
    Synthetic,

    /// <summary>100-byte Indy records, the sort job.</summary>
    Sort,

    /// <summary>Zipf text, WordCount.</summary>
    WordCount,

    /// <summary>"item TAB score" lines, top-k.</summary>
    TopK,

    /// <summary>The user's input (<see cref="JobSimulationOptions.InputPath"/>) with the job named by <see cref="JobSimulationOptions.Job"/>.</summary>
    Files,
}
