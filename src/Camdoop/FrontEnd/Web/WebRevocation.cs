namespace Camdoop.FrontEnd.Web;

/// <summary>What <see cref="WebSessions.RevokeAll"/> ended: the live sessions and the login codes not used yet.</summary>
public readonly record struct WebRevocation(int Sessions, int LoginCodes);
