using Camdoop.Cli.Tests.Testbed;
using Xunit.Abstractions;

namespace Camdoop.Cli.Tests.Fuzz;

/// <summary>
/// What reaches a cube from outside, on one 3x3x3 testbed (prefix cdz) shared by its tests: frames a node must drop
/// (FrontDoorTestbedTests.Fuzz.cs) and input a job cannot read (FrontDoorTestbedTests.BadInput.cs).
/// </summary>
[Collection(TestbedCollection.Name)]
public sealed partial class FrontDoorTestbedTests(FrontDoorCube cube, ITestOutputHelper output) : IClassFixture<FrontDoorCube>
{
}
