namespace Camdoop.MapReduce.Shuffle;

/// <summary>Smoothed round-trip time and its variation (Jacobson/Karels), and the retransmission timeout they give.</summary>
public struct RttEstimator
{
    private long _srtt;
    private long _rttvar;

    public readonly bool HasSample => _srtt > 0;

    public readonly long SmoothedRtt => _srtt;

    public void Add(long sample)
    {
        if (sample <= 0)
        {
            sample = 1;
        }
        if (_srtt == 0)
        {
            _srtt = sample;
            _rttvar = sample / 2;
            return;
        }
        long error = sample - _srtt;
        _srtt += error / 8;
        _rttvar += (Math.Abs(error) - _rttvar) / 4;
    }

    /// <summary>SRTT + 4 RTTVAR, clamped to [min, max]; min before the first sample.</summary>
    public readonly long Timeout(long min, long max) => _srtt == 0 ? min : Math.Clamp(_srtt + (4 * _rttvar), min, max);
}
