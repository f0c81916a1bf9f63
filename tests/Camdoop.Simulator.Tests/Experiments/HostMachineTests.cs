using Camdoop.Experiments;

namespace Camdoop.Simulator.Tests.Experiments;

public class HostMachineTests
{
    private const string IntelVm = """
        processor	: 0
        vendor_id	: GenuineIntel
        cpu family	: 6
        model		: 207
        model name	: Intel(R) Xeon(R) Processor
        stepping	: 2
        cpu MHz		: 2100.000

        processor	: 1
        vendor_id	: GenuineIntel
        cpu family	: 6
        model		: 143
        model name	: Another Processor
        cpu MHz		: 3000.000

        """;

    [Fact]
    public void NamesTheFirstProcessorWithItsFamilyModelAndClock()
    {
        Assert.Equal("Intel(R) Xeon(R) Processor (family 6, model 207, 2100 MHz)", HostMachine.ProcessorFromCpuInfo(IntelVm));
    }

    [Fact]
    public void KeepsTheBareNameWhenNothingElseIsGiven()
    {
        Assert.Equal("AMD EPYC 9B14", HostMachine.ProcessorFromCpuInfo("processor : 0\nmodel name : AMD EPYC 9B14\n"));
    }

    [Fact]
    public void GivesNullWithoutAModelName()
    {
        // Some architectures (or containers) list processors without a model name: the caller falls back.
        Assert.Null(HostMachine.ProcessorFromCpuInfo("processor : 0\nBogoMIPS : 50.00\nFeatures : fp asimd\n"));
        Assert.Null(HostMachine.ProcessorFromCpuInfo(""));
    }

    [Fact]
    public void TheCurrentMachineHasAProcessorAndThisProcessCoreCount()
    {
        var machine = HostMachine.Current;
        Assert.False(string.IsNullOrWhiteSpace(machine.Processor));
        Assert.Equal(Environment.ProcessorCount, machine.LogicalCores);
        Assert.Equal(Environment.Version.ToString(), machine.Runtime);
        Assert.Contains(machine.Processor, machine.ToString(), StringComparison.Ordinal);
    }
}
