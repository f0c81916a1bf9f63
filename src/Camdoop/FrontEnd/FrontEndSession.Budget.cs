using Camdoop.ChunkStore;
using Camdoop.FrontEnd.Wire;

namespace Camdoop.FrontEnd;

// The front-end's memory budget as one session uses it: the buffer of the chunk being uploaded grows only with room
// granted first, and a chunk read for a download is granted its room before the chunk store allocates its bytes.
// Everything taken goes back when the bytes are dropped: stored, sent, refused, failed, or the client gone
// (Dispose, which the server calls however the connection ends).
public sealed partial class FrontEndSession
{
    /// <summary>Reads of a download tried at most this often: each asks again after waiting for the room it lacked.</summary>
    private const int MaxReadAttempts = 3;

    /// <summary>What the budget has granted for the upload's chunk buffer: its capacity.</summary>
    private long _chunkHeld;

    /// <summary>
    /// Takes room for the upload's chunk buffer to grow by <paramref name="growth"/> bytes. Refused (no room within
    /// the wait), the chunk is dropped with what it held, so that a refused upload holds nothing, and the one-line
    /// refusal goes to the client.
    /// </summary>
    private async ValueTask GrowChunkAsync(long growth, CancellationToken cancellation)
    {
        if (growth == 0)
        {
            return;
        }
        try
        {
            await _budget.ReserveAsync(growth, cancellation).ConfigureAwait(false);
        }
        catch (FrontEndException)
        {
            DropChunk();
            throw;
        }
        _chunkHeld += growth;
    }

    /// <summary>Hands the room of the upload's complete chunk to the caller, who releases it once the bytes are stored.</summary>
    private long TakeChunkHeld()
    {
        long held = _chunkHeld;
        _chunkHeld = 0;
        return held;
    }

    /// <summary>Drops the upload's chunk in progress, if any, and gives back what its buffer held.</summary>
    private void DropChunk()
    {
        if (_upload is not null)
        {
            _upload.Current = null;
        }
        _budget.Release(TakeChunkHeld());
    }

    /// <summary>
    /// Reads a chunk (or a job's output file) through <paramref name="read"/>, which passes the admission to the
    /// chunk store: room for the bytes is taken there, on the event loop, just before they are allocated. When there
    /// is none then, the read ends at once; the room is waited for here, off the loop (in turn with every other
    /// reservation, and for at most the budget's wait), and the read asked again holding it. Returns the result and
    /// the bytes held for it, which the caller releases when it has sent them; nothing is held when the read failed.
    /// </summary>
    private async Task<(ReadResult Result, long Held)> ReadWithinBudgetAsync(Action<Action<ReadResult>, Func<ChunkMeta, bool>> read, CancellationToken cancellation)
    {
        var admission = new ReadAdmission(_budget);
        try
        {
            for (int attempt = 1; ; attempt++)
            {
                admission.Wanted = 0;
                var result = await _node.Start<ReadResult>(done => read(done, admission.Admit)).ConfigureAwait(false);
                if (admission.Wanted == 0)
                {
                    // Room beyond the bytes (granted for a longer replica, or for none when the read failed) goes back.
                    long keep = Math.Min(admission.Held, result.Ok ? result.Bytes!.Length : 0);
                    _budget.Release(admission.Held - keep);
                    admission.Held = keep;
                    return (result, keep);
                }
                if (attempt == MaxReadAttempts)
                {
                    throw _budget.Refuse();
                }
                await _budget.ReserveAsync(admission.Wanted - admission.Held, cancellation).ConfigureAwait(false);
                admission.Held = admission.Wanted;
            }
        }
        catch
        {
            _budget.Release(admission.Held);
            throw;
        }
    }

    /// <summary>
    /// The chunk store's question "may the bytes be allocated now?" for one download, answered on the event loop: yes
    /// when the room held covers them or the budget grants the rest at once; otherwise no, with the length wanted.
    /// The session reads and sets <see cref="Held"/> and <see cref="Wanted"/> only between reads, never during one.
    /// </summary>
    private sealed class ReadAdmission(FrontEndMemoryBudget budget)
    {
        /// <summary>The room granted for the bytes so far.</summary>
        public long Held { get; set; }

        /// <summary>The length the budget had no room for in the last read; 0 when none was refused.</summary>
        public long Wanted { get; set; }

        public bool Admit(ChunkMeta meta)
        {
            if (meta.Length <= Held)
            {
                return true;
            }
            if (budget.TryReserve(meta.Length - Held))
            {
                Held = meta.Length;
                return true;
            }
            Wanted = meta.Length;
            return false;
        }
    }
}
