namespace Camdoop.MapReduce.Jobs;

/// <summary>A job name, assembly or type could not be resolved into an <see cref="IMapReduceJob"/>.</summary>
public sealed class JobLoadException : Exception
{
    public JobLoadException()
    {
    }

    public JobLoadException(string message) : base(message)
    {
    }

    public JobLoadException(string message, Exception innerException) : base(message, innerException)
    {
    }
}
