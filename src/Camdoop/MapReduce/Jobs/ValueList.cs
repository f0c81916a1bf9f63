namespace Camdoop.MapReduce.Jobs;

/// <summary>
/// The values of one key handed to <see cref="IMapReduceJob.Reduce"/>, without copying: either a single value or
/// values packed back to back in <c>data</c> with their end offsets in <c>ends</c>. Values arrive in ascending
/// byte order.
/// </summary>
public readonly ref struct ValueList
{
    private readonly ReadOnlySpan<byte> _data;
    private readonly ReadOnlySpan<int> _ends;
    private readonly bool _single;

    public ValueList(ReadOnlySpan<byte> data, ReadOnlySpan<int> ends)
    {
        _data = data;
        _ends = ends;
        _single = false;
    }

    private ValueList(ReadOnlySpan<byte> single)
    {
        _data = single;
        _ends = default;
        _single = true;
    }

    public static ValueList Single(ReadOnlySpan<byte> value) => new(value);

    public int Count => _single ? 1 : _ends.Length;

    public ReadOnlySpan<byte> this[int index]
    {
        get
        {
            if (_single)
            {
                return index == 0 ? _data : throw new ArgumentOutOfRangeException(nameof(index));
            }
            int start = index == 0 ? 0 : _ends[index - 1];
            return _data[start.._ends[index]];
        }
    }

    public Enumerator GetEnumerator() => new(this);

    public ref struct Enumerator
    {
        private readonly ValueList _list;
        private int _index;

        internal Enumerator(ValueList list)
        {
            _list = list;
            _index = -1;
        }

        public readonly ReadOnlySpan<byte> Current => _list[_index];

        public bool MoveNext() => ++_index < _list.Count;
    }
}
