using Xunit.Abstractions;

[assembly: TestCollectionOrderer("Camdoop.Cli.Tests.Support.TestbedCollectionFirst", "Camdoop.Cli.Tests")]

namespace Camdoop.Cli.Tests.Support;

/// <summary>
/// Starts the testbed tests' collection first. They run one after another and are the longest lane of this
/// assembly's run; started after whichever collections came first, they began a minute and a half late and the whole
/// run ended that much later, while the other collections fit beside them on the second thread.
/// </summary>
public sealed class TestbedCollectionFirst : ITestCollectionOrderer
{
    public IEnumerable<ITestCollection> OrderTestCollections(IEnumerable<ITestCollection> testCollections) =>
        testCollections.OrderBy(c => c.DisplayName == Testbed.TestbedCollection.Name ? 0 : 1);
}
