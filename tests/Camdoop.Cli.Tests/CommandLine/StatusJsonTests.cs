using Camdoop.Cli.Commands;
using Camdoop.FrontEnd.Wire;

namespace Camdoop.Cli.Tests.CommandLine;

/// <summary>`camdoop status --json` and `submit --wait --json` print the job's fields as they always have.</summary>
public class StatusJsonTests
{
    private static JobStatusReply Status(string? failure, string? dataset) => new()
    {
        Id = 3,
        JobId = "00000000deadbeef",
        Job = "topk?k=5",
        Input = "corpus",
        Reducers = 2,
        Mode = "camdoop",
        Trees = "paper",
        State = failure is null ? "done" : "failed",
        Servers = 27,
        MapsDone = 27,
        MapTasks = 27,
        InputBytes = 1000,
        IntermediateBytes = 2000,
        ShuffleBytes = 1500,
        ReducesDone = 2,
        JobSeconds = 1.25,
        MapSeconds = 0.5,
        ShuffleReduceSeconds = 0.0,
        Failure = failure,
        OutputDataset = dataset,
        Outputs =
        [
            new JobOutputInfo { ReduceTask = 0, Server = "0,0,0", Path = "/tmp/x/part-00000", Chunk = null, Records = 5, Bytes = 60 },
            new JobOutputInfo { ReduceTask = 1, Server = "1,0,0", Path = null, Chunk = "ab", Records = 7, Bytes = 1L << 40 },
        ],
        Failures = failure is null ? [] : [new JobFailureInfo { Server = "2,1,0", DetectedAtSeconds = 0.75, DetectedAtUnixMs = 1_795_000_000_123, During = "shuffling" }],
        Recovery = failure is null ? new() : new JobRecoveryInfo { ResentBytes = 4096, MapTasksRerun = 1, VerticesAdopted = 6 },
        Coordinator = failure is null ? "0,0,0" : "1,2,0",
        Attempt = failure is null ? 0 : 1,
    };

    // Both expected texts are what the CLI printed before the front-end moved to MessagePack-CSharp, plus "trees",
    // "failures", "recovery", "coordinator" and "attempt".
    [Fact]
    public void ARunningOrDoneJobPrintsNullFailureAndNoOutputDataset()
    {
        Assert.Equal(
            """
            {
              "jobId": "00000000deadbeef",
              "job": "topk?k=5",
              "input": "corpus",
              "reducers": 2,
              "mode": "camdoop",
              "trees": "paper",
              "state": "done",
              "servers": 27,
              "mapsDone": 27,
              "mapTasks": 27,
              "inputBytes": 1000,
              "intermediateBytes": 2000,
              "shuffleBytes": 1500,
              "reducesDone": 2,
              "jobSeconds": 1.25,
              "mapSeconds": 0.5,
              "shuffleReduceSeconds": 0,
              "failure": null,
              "outputs": [
                {
                  "reduceTask": 0,
                  "server": "0,0,0",
                  "path": "/tmp/x/part-00000",
                  "chunk": null,
                  "records": 5,
                  "bytes": 60
                },
                {
                  "reduceTask": 1,
                  "server": "1,0,0",
                  "path": null,
                  "chunk": "ab",
                  "records": 7,
                  "bytes": 1099511627776
                }
              ],
              "failures": [],
              "recovery": {
                "resentBytes": 0,
                "mapTasksRerun": 0,
                "verticesAdopted": 0
              },
              "coordinator": "0,0,0",
              "attempt": 0,
              "frontend": "10.77.0.1:7070"
            }
            """,
            StatusCommand.ToJson(Status(null, null), "10.77.0.1:7070"));
    }

    [Fact]
    public void AFailedJobWithAnOutputDatasetPrintsBoth()
    {
        Assert.Equal(
            """
            {
              "jobId": "00000000deadbeef",
              "job": "topk?k=5",
              "input": "corpus",
              "reducers": 2,
              "mode": "camdoop",
              "trees": "paper",
              "state": "failed",
              "servers": 27,
              "mapsDone": 27,
              "mapTasks": 27,
              "inputBytes": 1000,
              "intermediateBytes": 2000,
              "shuffleBytes": 1500,
              "reducesDone": 2,
              "jobSeconds": 1.25,
              "mapSeconds": 0.5,
              "shuffleReduceSeconds": 0,
              "failure": "a server failed: \u0022x\u0022 \u003Cy\u003E \u002BZ \u00E9",
              "outputDataset": "out",
              "outputs": [
                {
                  "reduceTask": 0,
                  "server": "0,0,0",
                  "path": "/tmp/x/part-00000",
                  "chunk": null,
                  "records": 5,
                  "bytes": 60
                },
                {
                  "reduceTask": 1,
                  "server": "1,0,0",
                  "path": null,
                  "chunk": "ab",
                  "records": 7,
                  "bytes": 1099511627776
                }
              ],
              "failures": [
                {
                  "server": "2,1,0",
                  "detectedAtSeconds": 0.75,
                  "detectedAtUnixMs": 1795000000123,
                  "during": "shuffling"
                }
              ],
              "recovery": {
                "resentBytes": 4096,
                "mapTasksRerun": 1,
                "verticesAdopted": 6
              },
              "coordinator": "1,2,0",
              "attempt": 1,
              "frontend": "10.77.0.1:7070"
            }
            """,
            StatusCommand.ToJson(Status("a server failed: \"x\" <y> +Z é", "out"), "10.77.0.1:7070"));
    }
}
