namespace Camdoop.Runtime.Frames;

/// <summary>Why a received frame was rejected. Every rejection is counted per reason.</summary>
public enum FrameError : byte
{
    None = 0,
    Truncated,
    WrongEtherType,
    WrongVersion,
    BadLength,
    Oversize,
    BadFlags,
    BadCoordinate,
    UnknownService,
    TtlExpired,
}

public static class FrameErrors
{
    public const int Count = (int)FrameError.TtlExpired + 1;

    public static string Describe(this FrameError error) => error switch
    {
        FrameError.None => "ok",
        FrameError.Truncated => "truncated: shorter than the headers it claims",
        FrameError.WrongEtherType => "not a CamCube EtherType",
        FrameError.WrongVersion => "unsupported CamCube header version",
        FrameError.BadLength => "payload length does not fit the frame",
        FrameError.Oversize => "larger than a 9,014-byte jumbo frame",
        FrameError.BadFlags => "unknown header flags",
        FrameError.BadCoordinate => "coordinate outside the torus",
        FrameError.UnknownService => "no service with that id on this server",
        FrameError.TtlExpired => "TTL expired",
        _ => error.ToString(),
    };
}
