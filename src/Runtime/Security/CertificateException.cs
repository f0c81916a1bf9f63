namespace Camdoop.Runtime.Security;

/// <summary>A credential that cannot be made, read or used; the message is one line naming the file and the problem.</summary>
public sealed class CertificateException : Exception
{
    public CertificateException(string message)
        : base(message)
    {
    }

    public CertificateException(string message, Exception inner)
        : base(message, inner)
    {
    }
}
