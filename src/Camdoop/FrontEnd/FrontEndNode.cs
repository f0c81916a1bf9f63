using System.Text.Json;
using Camdoop.ChunkStore;
using Camdoop.FrontEnd.Wire;
using Camdoop.JobControl;
using Camdoop.KeyRouting;
using Camdoop.Monitoring.Service;
using Camdoop.Runtime.Hosting;

namespace Camdoop.FrontEnd;

/// <summary>
/// What a front-end session may use of its server: the event loop (the only way in to the services, which are
/// single-threaded) and the services themselves, touched only inside <see cref="OnLoop{T}"/> / <see cref="Start{T}"/>.
/// </summary>
public sealed class FrontEndNode
{
    public FrontEndNode(NodeEventLoop loop, Func<Task<JsonElement>> status)
    {
        ArgumentNullException.ThrowIfNull(loop);
        ArgumentNullException.ThrowIfNull(status);
        Loop = loop;
        Status = status;
        Routing = loop.Host.GetService<KeyRoutingService>() ?? throw new InvalidOperationException("the front-end needs the key-routing service");
        Ping = loop.Host.GetService<PingService>() ?? throw new InvalidOperationException("the front-end needs the ping service");
        Store = loop.Host.GetService<ChunkStoreService>() ?? throw new InvalidOperationException("the front-end needs the chunk store");
        Jobs = loop.Host.GetService<JobControlService>();
        Monitor = loop.Host.GetService<MonitorService>();
        Metrics = Monitor is null ? null : new CubeMetrics(this, Monitor);
    }

    /// <summary>The monitoring service, when the server runs it.</summary>
    public MonitorService? Monitor { get; }

    /// <summary>The whole cube's metrics, gathered through <see cref="Monitor"/>; shared by every session and the web view.</summary>
    public CubeMetrics? Metrics { get; }

    public NodeEventLoop Loop { get; }

    public KeyRoutingService Routing { get; }

    public PingService Ping { get; }

    public ChunkStoreService Store { get; }

    /// <summary>Job control, when the server runs the Camdoop service.</summary>
    public JobControlService? Jobs { get; }

    /// <summary>The server's status snapshot as JSON (taken on the loop).</summary>
    public Func<Task<JsonElement>> Status { get; }

    /// <summary>Runs <paramref name="func"/> on the event loop and returns its result.</summary>
    public async Task<T> OnLoop<T>(Func<T> func)
    {
        try
        {
            return await Loop.InvokeAsync(func).ConfigureAwait(false);
        }
        catch (JobControlException e)
        {
            throw new FrontEndException(e.Message, e);
        }
        catch (InvalidOperationException e) when (!Loop.IsRunning)
        {
            throw new FrontEndException($"server {Loop.Host.Self} is shutting down", e);
        }
    }

    /// <summary>
    /// Starts an asynchronous service operation on the event loop: <paramref name="start"/> runs there and must call
    /// the completion it is given exactly once, later or at once (also on the loop). The task completes off the loop.
    /// </summary>
    public Task<T> Start<T>(Action<Action<T>> start)
    {
        var completion = new TaskCompletionSource<T>(TaskCreationOptions.RunContinuationsAsynchronously);
        try
        {
            Loop.Post(() =>
            {
                try
                {
                    start(result => completion.TrySetResult(result));
                }
                catch (JobControlException e)
                {
                    completion.TrySetException(new FrontEndException(e.Message, e));
                }
                // handed to the waiting session
                catch (Exception e)
                {
                    completion.TrySetException(e);
                }
            });
        }
        catch (InvalidOperationException e)
        {
            completion.TrySetException(new FrontEndException($"server {Loop.Host.Self} is shutting down", e));
        }
        return completion.Task;
    }
}
