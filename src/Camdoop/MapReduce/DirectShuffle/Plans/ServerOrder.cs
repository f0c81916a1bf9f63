namespace Camdoop.MapReduce.DirectShuffle.Plans;

/// <summary>
/// The servers of one aggregation tree in tree order: the root first, then the others in index order (so in rack
/// order) starting after the root, rotated by the tree's share so each tree puts different servers at the top.
/// </summary>
internal readonly struct ServerOrder
{
    private readonly int _servers;
    private readonly int _root;
    private readonly int _shift;

    public ServerOrder(int servers, int root, int tree, int trees)
    {
        _servers = servers;
        _root = root;
        _shift = servers <= 1 ? 0 : (int)((long)tree * (servers - 1) / trees);
    }

    public int PositionOf(int server)
    {
        if (server == _root)
        {
            return 0;
        }
        int others = _servers - 1;
        int p = (server - _root + _servers) % _servers; // 1 .. others
        return (((p - 1 - _shift) % others) + others) % others + 1;
    }

    public int ServerAt(int position) =>
        position == 0 ? _root : (_root + 1 + ((position - 1 + _shift) % (_servers - 1))) % _servers;
}
