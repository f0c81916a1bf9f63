using System.Security.Cryptography;
using Camdoop.FrontEnd.Wire;

namespace Camdoop.FrontEnd.Auth;

/// <summary>
/// The cluster's shared secret: the bytes of one key file, which every front-end and every client of the cluster
/// holds. It never leaves this object except as HMACs over per-connection nonces (the web view's token):
/// <see cref="ToString"/> names the file, never the bytes, so a key cannot reach a log, a status file or an error.
/// </summary>
public sealed class ClusterKey
{
    /// <summary>What <see cref="Create"/> writes: 32 random bytes, the HMAC-SHA256 block's worth of entropy.</summary>
    public const int CreatedBytes = 32;

    /// <summary>Fewer bytes than this would be guessable; a hex or base64 text of 32 random bytes is longer and fine.</summary>
    public const int MinBytes = 32;

    /// <summary>A key file is read whole; anything larger is not a key file.</summary>
    public const int MaxBytes = 4096;

    private readonly byte[] _secret;

    private ClusterKey(byte[] secret, string source)
    {
        _secret = secret;
        Source = source;
    }

    /// <summary>Where the key came from (a file path), for messages.</summary>
    public string Source { get; }

    /// <summary>
    /// Reads a key file. Fails with one line naming the file and the problem (missing, unreadable, too short,
    /// too long), never its contents.
    /// </summary>
    public static ClusterKey Load(string path)
    {
        ArgumentNullException.ThrowIfNull(path);
        byte[] bytes;
        try
        {
            var info = new FileInfo(path);
            if (!info.Exists)
            {
                throw new FrontEndException($"cluster key file {path} does not exist");
            }
            if (info.Length > MaxBytes)
            {
                throw new FrontEndException($"cluster key file {path} holds {info.Length} bytes; a key file holds {MinBytes} to {MaxBytes}");
            }
            bytes = File.ReadAllBytes(path);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            throw new FrontEndException($"cannot read cluster key file {path}: {e.Message}", e);
        }
        if (bytes.Length is < MinBytes or > MaxBytes)
        {
            throw new FrontEndException($"cluster key file {path} holds {bytes.Length} bytes; a key file holds {MinBytes} to {MaxBytes} (create one with 'head -c 32 /dev/urandom > {path}')");
        }
        return new ClusterKey(bytes, path);
    }

    /// <summary>
    /// Writes a new random key to <paramref name="path"/>, readable and writable by its owner only (mode 0600 from
    /// the moment it exists, so the secret is never briefly readable by others), replacing any file there.
    /// </summary>
    public static ClusterKey Create(string path)
    {
        ArgumentNullException.ThrowIfNull(path);
        var secret = RandomNumberGenerator.GetBytes(CreatedBytes);
        string temporary = path + ".tmp";
        File.Delete(temporary);
        var options = new FileStreamOptions { Mode = FileMode.CreateNew, Access = FileAccess.Write };
        if (!OperatingSystem.IsWindows())
        {
            options.UnixCreateMode = UnixFileMode.UserRead | UnixFileMode.UserWrite;
        }
        using (var file = new FileStream(temporary, options))
        {
            file.Write(secret);
            file.Flush(flushToDisk: true);
        }
        File.Move(temporary, path, overwrite: true);
        return new ClusterKey(secret, path);
    }

    /// <summary>A key held in memory only (tests).</summary>
    public static ClusterKey FromBytes(ReadOnlySpan<byte> secret, string source = "(in memory)")
    {
        if (secret.Length is < MinBytes or > MaxBytes)
        {
            throw new ArgumentException($"a cluster key holds {MinBytes} to {MaxBytes} bytes", nameof(secret));
        }
        return new ClusterKey(secret.ToArray(), source);
    }

    /// <summary>HMAC-SHA256 under the key of <paramref name="message"/>, into <paramref name="destination"/> (32 bytes).</summary>
    internal void Mac(ReadOnlySpan<byte> message, Span<byte> destination) => HMACSHA256.HashData(_secret, message, destination);

    public override string ToString() => $"cluster key from {Source}";
}
