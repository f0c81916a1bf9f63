namespace Camdoop.Runtime.Security;

/// <summary>
/// A server's credentials as its directory holds them now: checked for changed files at most every
/// <see cref="CheckEvery"/>, and read again when they changed, so that an operator rotates certificates (or adds a
/// serial to revoked.txt) by replacing files, without restarting a server or breaking the connections it has. A
/// replacement that cannot be read is reported once and the credentials in use stay.
/// </summary>
public sealed class CredentialsSource
{
    private static readonly TimeSpan CheckEvery = TimeSpan.FromSeconds(2);

    private readonly string _directory;
    private readonly CertificateRole _role;
    private readonly Action<string> _log;
    private readonly Lock _gate = new();
    private ClusterCredentials _current;
    private DateTime _stamp;
    private long _checkedAt;

    public CredentialsSource(string directory, CertificateRole role, Action<string>? log = null)
    {
        _directory = directory;
        _role = role;
        _log = log ?? (_ => { });
        _stamp = Stamp();
        _current = ClusterCredentials.Load(directory, role);
        _checkedAt = Environment.TickCount64;
    }

    public string Directory => _directory;

    /// <summary>The credentials to use for a new connection.</summary>
    public ClusterCredentials Current
    {
        get
        {
            long now = Environment.TickCount64;
            lock (_gate)
            {
                if (now - _checkedAt < CheckEvery.TotalMilliseconds)
                {
                    return _current;
                }
                _checkedAt = now;
                var stamp = Stamp();
                if (stamp == _stamp)
                {
                    return _current;
                }
                _stamp = stamp;
                try
                {
                    // The credentials replaced stay alive: connections made with them still use their certificate.
                    _current = ClusterCredentials.Load(_directory, _role);
                    _log($"credentials in {_directory} changed: now {_current.Identity}, certificate valid to {_current.Certificate.NotAfter.ToUniversalTime():yyyy-MM-dd}");
                }
                catch (CertificateException e)
                {
                    _log($"credentials in {_directory} changed but cannot be used, keeping the ones loaded before: {e.Message}");
                }
                return _current;
            }
        }
    }

    /// <summary>The newest change time among the files read.</summary>
    private DateTime Stamp()
    {
        var newest = DateTime.MinValue;
        foreach (string name in new[] { CertificateFiles.AuthorityCertificate, CertificateFiles.Certificate(_role), CertificateFiles.Key(_role), ClusterCredentials.RevokedFile })
        {
            var info = new FileInfo(Path.Combine(_directory, name));
            if (info.Exists && info.LastWriteTimeUtc > newest)
            {
                newest = info.LastWriteTimeUtc;
            }
        }
        return newest;
    }
}
