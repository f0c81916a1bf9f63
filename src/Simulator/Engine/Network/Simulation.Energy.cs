using Camdoop.Simulator.Energy;

namespace Camdoop.Simulator.Network;

// Energy per job (SimulationOptions.Energy): every link direction with a cable is a port that spends energy, torus
// cable, server NIC or switch port alike. Only EEE changes when frames leave; legacy and ideal follow from busy time.
public sealed partial class Simulation
{
    /// <summary>Gives every link direction its 802.3az transmitter when the run is under EEE.</summary>
    private void AttachEnergyModel()
    {
        if (_options.Energy is not { Kind: EnergyModelKind.Eee } model)
        {
            return;
        }
        foreach (var link in _links)
        {
            // A cable with its own rate (an agg box's) wakes and sleeps at that rate's timings.
            long rate = link.OwnRateBitsPerSecond != 0 ? link.OwnRateBitsPerSecond : _options.LinkRateBitsPerSecond;
            link.Eee = new EeeTransmitter(model.WakeTimeAt(rate), model.SleepTimeAt(rate), model.HoldTime, model.PacketTrigger);
        }
    }

    /// <summary>
    /// The energy every port spent from time 0 to <paramref name="end"/> (a job's end; links count as they are now past it) under
    /// the run's <see cref="SimulationOptions.Energy"/>, split by kind of link direction. Exact when no link woke more
    /// than once after <paramref name="end"/>. Call it between runs (no partition running).
    /// </summary>
    public NetworkEnergy MeasureEnergy(long end)
    {
        var model = EnergyModelOrThrow();
        ArgumentOutOfRangeException.ThrowIfNegative(end);
        double torus = 0, nics = 0, switches = 0;
        long lowPowerTotal = 0, wakes = 0;
        int ports = 0, n = ServerCount;
        foreach (var link in _links)
        {
            if (ReferenceEquals(link.Peer, link))
            {
                continue; // a server port with no cable
            }
            long lowPower = LowPowerTime(model, link, end);
            double joules = Joules(model, link, end, lowPower);
            wakes += link.Eee?.Wakes ?? 0;
            ports++;
            lowPowerTotal += lowPower;
            if (link.FromIndex >= n)
            {
                switches += joules;
            }
            else if (link.ToIndex >= n)
            {
                nics += joules;
            }
            else
            {
                torus += joules;
            }
        }
        return new NetworkEnergy(model.Name, torus + nics + switches, new EnergyByLinkKind(torus, nics, switches), end / 1e9, ports,
            model.WattsAt(_options.LinkRateBitsPerSecond), ports == 0 || end == 0 ? 0 : lowPowerTotal / ((double)ports * end), wakes);
    }

    /// <summary>Joules one link direction's port spent from time 0 to <paramref name="end"/> (see <see cref="MeasureEnergy"/>).</summary>
    public double EnergyOf(SimulatedLink link, long end)
    {
        ArgumentNullException.ThrowIfNull(link);
        var model = EnergyModelOrThrow();
        return Joules(model, link, end, LowPowerTime(model, link, end));
    }

    private EnergyModel EnergyModelOrThrow() =>
        _options.Energy ?? throw new InvalidOperationException("the simulation has no energy model (SimulationOptions.Energy)");

    private static long LowPowerTime(EnergyModel model, SimulatedLink link, long end) => model.Kind switch
    {
        EnergyModelKind.Legacy => 0,
        EnergyModelKind.Ideal => end - Math.Min(end, link.BusyTime),
        _ => Math.Clamp(link.Eee!.LowPowerTime(end), 0, end),
    };

    // Full power (at the port's own rate: an agg box's 10 Gbit/s cable draws a 10G port's) except in low-power idle,
    // where the port draws the idle share.
    private double Joules(EnergyModel model, SimulatedLink link, long end, long lowPower) =>
        model.WattsAt(link.OwnRateBitsPerSecond != 0 ? link.OwnRateBitsPerSecond : _options.LinkRateBitsPerSecond)
        * ((end - lowPower) + (model.IdleFraction * lowPower)) / 1e9;
}
