using System.Globalization;
using Camdoop.ChunkStore;
using Camdoop.MapReduce.Jobs;

namespace Camdoop.JobControl;

/// <summary>
/// Whether a dataset's recorded format can feed a job's map tasks. Checked when a job is submitted, so that a text
/// dataset given to <c>sort</c> (or records given to a text job) is refused in one line before any server maps it.
/// </summary>
public static class DatasetFit
{
    /// <summary>Why <paramref name="manifest"/> cannot be the input of <paramref name="job"/>, or null when it can.</summary>
    public static string? WhyNot(IMapReduceJob job, DatasetManifest manifest)
    {
        ArgumentNullException.ThrowIfNull(job);
        ArgumentNullException.ThrowIfNull(manifest);
        var wanted = job.InputFormat;
        bool fits = wanted.Kind == InputKind.TextLines
            ? manifest.Format == DatasetFormat.Text
            : manifest.Format == DatasetFormat.Records && manifest.RecordSize == wanted.RecordSize;
        if (fits)
        {
            return null;
        }
        string put = wanted.Kind == InputKind.TextLines
            ? "--format text"
            : string.Create(CultureInfo.InvariantCulture, $"--format records{wanted.RecordSize}");
        return $"dataset '{manifest.Name}' holds {Describe(manifest)} but {job.Name} reads {wanted}; store its input with 'camdoop put {put}'";
    }

    private static string Describe(DatasetManifest manifest) => manifest.Format == DatasetFormat.Text
        ? "text lines"
        : string.Create(CultureInfo.InvariantCulture, $"{manifest.RecordSize}-byte records");
}
