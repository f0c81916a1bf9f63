namespace Camdoop.Cli.Tests.Testbed;

/// <summary>
/// Every testbed test, one at a time. Each testbed has a namespace prefix of its own (which names its namespaces, host
/// veth, data root, and state and key files in /run/camdoop) and a subnet of its own (the host's route to its switch
/// network), so that none meets another, nor a testbed a developer has up under the default prefix. They still run
/// one after another: while it works, one testbed's node processes take most of what a two-core machine has, and two
/// at once starve each other's clients past their timeouts (a front-end gives a client 10 s to authenticate) and make
/// the failure tests' kills miss the moments they aim at.
/// <para>
/// In use: cdr 206 (failures), cdz 212 (front door), cdm 217 (monitoring), cdw 220 (web view), cdl 219 (limits),
/// cdp 207 (pcap), cdu 211 (durability), cde 205 (end to end), cdk 213 (operator), cdtl 203, cdtc 204, cdtq 208
/// and cdtr 209 (life cycle), cdtn 201 (network), cdrr 214 (re-replication), cdst 234 (streaming jobs),
/// cdmx 235 (metrics).
/// </para>
/// </summary>
[CollectionDefinition(Name)]
public sealed class TestbedCollection
{
    public const string Name = "Testbed";
}
