using System.Text.Json;

namespace Camdoop.FrontEnd.Web;

/// <summary>How the web view writes JSON: camelCase, as the rest of the product's JSON.</summary>
public static class WebJson
{
    public static readonly JsonSerializerOptions Options = new()
    {
        PropertyNamingPolicy = JsonNamingPolicy.CamelCase,
        DefaultIgnoreCondition = System.Text.Json.Serialization.JsonIgnoreCondition.WhenWritingNull,
    };
}
