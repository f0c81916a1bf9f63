using System.Runtime.Intrinsics;
using System.Runtime.Intrinsics.X86;
using Camdoop.MapReduce.Merge;
using Xunit.Abstractions;

namespace Camdoop.MapReduce.Tests.Merge;

/// <summary>
/// Which of the merger's two paths the merge tests in this process ran: the 512-bit vector scan of the head prefixes
/// or the scalar fallback. test.sh runs the merge tests a second time with AVX-512 turned off in the runtime; this
/// test fails when that did not take effect, so the second pass cannot silently test the vector path again.
/// </summary>
public sealed class StreamMergerPathTests(ITestOutputHelper output)
{
    // .NET 10's knob for the AVX-512 F+BW+CD+DQ+VL group; earlier runtimes read DOTNET_EnableAVX512F, which .NET 10
    // ignores (Avx512F.IsSupported stays true under it alone).
    private static readonly string[] Knobs = ["DOTNET_EnableAVX512", "DOTNET_EnableAVX512F"];

    [Fact]
    public void TheMergerTakesTheVectorPathExactlyWhenAvx512IsOn()
    {
        var off = Knobs.Where(k => Environment.GetEnvironmentVariable(k) == "0").ToList();
        string path = StreamMerger.UsesVector512 ? "the AVX-512 vector path" : "the scalar path";
        if (off.Count > 0)
        {
            Assert.False(Avx512F.IsSupported, $"{string.Join(" and ", off.Select(k => k + "=0"))} did not turn AVX-512 off in this runtime");
            Assert.False(StreamMerger.UsesVector512, "AVX-512 is off, yet the merger would take its vector path");
            output.WriteLine($"AVX-512 turned off ({string.Join(", ", off.Select(k => k + "=0"))}): the merge tests ran {path}");
        }
        else if (!Avx512F.IsSupported)
        {
            Assert.False(StreamMerger.UsesVector512);
            output.WriteLine($"this machine (or runtime) has no AVX-512: the merge tests ran {path} only");
        }
        else
        {
            // With AVX-512 the runtime may still prefer 256-bit vectors (DOTNET_PreferredVectorBitWidth, or CPUs where
            // 512-bit code throttles); the merger follows Vector512's verdict.
            Assert.Equal(Vector512.IsHardwareAccelerated, StreamMerger.UsesVector512);
            output.WriteLine($"AVX-512 on: the merge tests ran {path}");
        }
    }
}
