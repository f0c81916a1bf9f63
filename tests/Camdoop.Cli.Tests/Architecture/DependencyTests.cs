using System.Text;
using Mono.Cecil;
using Xunit.Abstractions;

namespace Camdoop.Cli.Tests.Architecture;

/// <summary>
/// The product's layering, read from the compiled assemblies (this project references every one of them through the
/// CLI). Namespaces must not depend on each other in a cycle, and assemblies may reference only the layers below them:
/// Runtime and Records (the record format and its checksum) at the bottom, Runtime &lt;- KeyRouting, then MapReduce
/// and ChunkStore side by side on those three (neither on the other), Monitoring on KeyRouting, JobControl on MapReduce
/// and ChunkStore, Server (the services a server runs) on JobControl and Monitoring, FrontEnd on JobControl and
/// Monitoring (never the other way: job control runs on every server, front-end or not), Server and FrontEnd &lt;-
/// Hosting &lt;- camdoop; and Runtime &lt;- Simulator &lt;- Experiments, where Experiments runs the servers' stack in
/// the simulator and camdoop uses Experiments. The simulator submits jobs to job control as a client does: nothing in
/// it starts a shuffle service's job itself.
/// </summary>
public sealed class DependencyTests(ITestOutputHelper output)
{
    private const string Runtime = "Camdoop.Runtime";
    private const string KeyRouting = "Camdoop.KeyRouting";
    private const string Records = "Camdoop.Records";
    private const string MapReduce = "Camdoop.MapReduce";
    private const string ChunkStore = "Camdoop.ChunkStore";
    private const string Monitoring = "Camdoop.Monitoring";
    private const string JobControl = "Camdoop.JobControl";
    private const string Server = "Camdoop.Server";
    private const string FrontEnd = "Camdoop.FrontEnd";
    private const string Hosting = "Camdoop.Hosting";
    private const string Simulator = "Camdoop.Simulator";
    private const string Experiments = "Camdoop.Experiments";
    private const string Cli = "camdoop";

    /// <summary>Each product assembly and the product assemblies it may reference.</summary>
    private static readonly Dictionary<string, string[]> Allowed = new()
    {
        [Runtime] = [],
        [KeyRouting] = [Runtime],
        [Records] = [],
        [MapReduce] = [Runtime, KeyRouting, Records],
        [ChunkStore] = [Runtime, KeyRouting, Records],
        [Monitoring] = [Runtime, KeyRouting],
        [JobControl] = [Runtime, KeyRouting, Records, MapReduce, ChunkStore],
        [Server] = [Runtime, KeyRouting, Records, MapReduce, ChunkStore, JobControl, Monitoring],
        [FrontEnd] = [Runtime, KeyRouting, Records, MapReduce, ChunkStore, JobControl, Monitoring],
        [Hosting] = [Runtime, KeyRouting, Records, MapReduce, ChunkStore, JobControl, Monitoring, Server, FrontEnd],
        [Simulator] = [Runtime],
        [Experiments] = [Runtime, Simulator, KeyRouting, Records, MapReduce, ChunkStore, JobControl, Monitoring, Server],
        [Cli] = [Runtime, KeyRouting, Records, MapReduce, ChunkStore, JobControl, Monitoring, Server, FrontEnd, Hosting, Simulator, Experiments],
    };

    [Fact]
    public void AssembliesReferenceOnlyTheLayersBelowThem()
    {
        var wrong = new List<string>();
        foreach (var (name, allowed) in Allowed)
        {
            using var assembly = Load(name);
            foreach (var reference in assembly.MainModule.AssemblyReferences)
            {
                bool product = reference.Name.StartsWith("Camdoop", StringComparison.Ordinal) || reference.Name == Cli;
                if (product && !allowed.Contains(reference.Name))
                {
                    wrong.Add($"{name} references {reference.Name} (it may reference only {(allowed.Length == 0 ? "none" : string.Join(", ", allowed))})");
                }
            }
        }
        Assert.True(wrong.Count == 0, string.Join(Environment.NewLine, wrong));
    }

    [Fact]
    public void NamespacesDependOnEachOtherWithoutCycles()
    {
        var graph = new NamespaceGraph();
        foreach (var name in Allowed.Keys)
        {
            using var assembly = Load(name);
            graph.Add(assembly.MainModule);
        }
        Assert.True(graph.Edges.Count > 10, $"only {graph.Edges.Count} namespace dependencies found: the reader misses references");
        var cycles = graph.Cycles();
        output.WriteLine($"{graph.Edges.Keys.Select(e => e.From).Concat(graph.Edges.Keys.Select(e => e.To)).Distinct().Count()} namespaces, {graph.Edges.Count} dependencies");
        Assert.True(cycles.Count == 0, "namespace dependency cycles:" + Environment.NewLine + string.Join(Environment.NewLine, cycles));
    }

    [Fact]
    public void TheGraphHoldsKnownDependenciesAndOnlyProductNamespaces()
    {
        // Known dependencies, so that a reader that misses references cannot pass by finding no cycle in nothing.
        var graph = new NamespaceGraph();
        foreach (var name in Allowed.Keys)
        {
            using var assembly = Load(name);
            graph.Add(assembly.MainModule);
        }
        Assert.Contains(("Camdoop.MapReduce.Trees", "Camdoop.Runtime.Topology"), graph.Edges.Keys);
        Assert.Contains(("Camdoop.Experiments", "Camdoop.Simulator.Network"), graph.Edges.Keys);
        Assert.DoesNotContain(graph.Edges.Keys, e => e.From == e.To);
        Assert.All(graph.Edges.Keys, e => Assert.StartsWith("Camdoop", e.From, StringComparison.Ordinal));
        Assert.All(graph.Edges.Keys, e => Assert.StartsWith("Camdoop", e.To, StringComparison.Ordinal));
    }

    /// <summary>
    /// The simulator runs jobs through the servers' job control, as a client does on a cube: no method of the simulator
    /// or its experiments calls a shuffle service's StartJob (the Camdoop service's or the stream shuffle's).
    /// </summary>
    [Fact]
    public void TheSimulatorStartsNoShuffleDirectly()
    {
        var starts = new List<string>();
        int calls = 0;
        foreach (var name in new[] { Simulator, Experiments, JobControl })
        {
            using var assembly = Load(name);
            foreach (var type in assembly.MainModule.GetTypes())
            {
                foreach (var method in type.Methods.Where(m => m.HasBody))
                {
                    foreach (var instruction in method.Body.Instructions)
                    {
                        if (instruction.Operand is MethodReference { Name: "StartJob" } called
                            && called.DeclaringType.FullName is "Camdoop.MapReduce.Service.CamdoopService" or "Camdoop.MapReduce.DirectShuffle.DirectShuffleService")
                        {
                            calls++;
                            if (name != JobControl)
                            {
                                starts.Add($"{type.FullName}.{method.Name} calls {called.DeclaringType.Name}.StartJob");
                            }
                        }
                    }
                }
            }
        }
        // Job control's worker starts both shuffles: the reader must see those calls, or it proves nothing.
        Assert.True(calls >= 2, $"only {calls} calls of StartJob found: the reader misses them");
        Assert.True(starts.Count == 0, string.Join(Environment.NewLine, starts));
    }

    private static AssemblyDefinition Load(string name)
    {
        string path = Path.Combine(AppContext.BaseDirectory, name + ".dll");
        Assert.True(File.Exists(path), $"{path} is missing: the test project must reference every product assembly");
        return AssemblyDefinition.ReadAssembly(path, new ReaderParameters { ReadSymbols = false });
    }

    /// <summary>
    /// Which Camdoop namespace uses which: for every type (nested types count as their outermost declaring type's
    /// namespace), the namespaces of the types it names in its base type, interfaces, generic constraints, fields,
    /// properties, events, method signatures, custom attributes and method bodies (locals, caught exceptions, and IL
    /// operands: a type, or the declaring type of a method or field).
    /// </summary>
    private sealed class NamespaceGraph
    {
        /// <summary>(from, to) to one example of the dependency, "type uses type".</summary>
        public Dictionary<(string From, string To), string> Edges { get; } = [];

        public void Add(ModuleDefinition module)
        {
            foreach (var type in module.GetTypes())
            {
                string from = NamespaceOf(type);
                if (!IsProduct(from))
                {
                    continue;
                }
                var uses = new Uses(this, from, type.FullName);
                uses.Type(type.BaseType);
                foreach (var i in type.Interfaces)
                {
                    uses.Type(i.InterfaceType);
                    uses.Attributes(i);
                }
                uses.Attributes(type);
                uses.GenericParameters(type);
                foreach (var field in type.Fields)
                {
                    uses.Type(field.FieldType);
                    uses.Attributes(field);
                }
                foreach (var property in type.Properties)
                {
                    uses.Type(property.PropertyType);
                    uses.Attributes(property);
                    foreach (var p in property.Parameters)
                    {
                        uses.Type(p.ParameterType);
                    }
                }
                foreach (var e in type.Events)
                {
                    uses.Type(e.EventType);
                    uses.Attributes(e);
                }
                foreach (var method in type.Methods)
                {
                    uses.Method(method);
                }
            }
        }

        /// <summary>One line per cycle: the namespaces around it, then each step's example.</summary>
        public List<string> Cycles()
        {
            var next = Edges.Keys.GroupBy(e => e.From).ToDictionary(g => g.Key, g => g.Select(e => e.To).Order(StringComparer.Ordinal).ToList());
            var cycles = new List<string>();
            foreach (var component in StronglyConnected(next).Where(c => c.Count > 1))
            {
                var path = CycleWithin(component, next);
                var text = new StringBuilder(string.Join(" -> ", path.Append(path[0])));
                var others = component.Except(path).Order(StringComparer.Ordinal).ToList();
                if (others.Count > 0)
                {
                    text.Append(" (the cycles also run through ").Append(string.Join(", ", others)).Append(')');
                }
                for (int i = 0; i < path.Count; i++)
                {
                    var edge = (path[i], path[(i + 1) % path.Count]);
                    text.Append(Environment.NewLine).Append("    ").Append(edge.Item1).Append(" -> ").Append(edge.Item2).Append(": ").Append(Edges[edge]);
                }
                cycles.Add(text.ToString());
            }
            return cycles;
        }

        private void AddEdge(string from, string user, TypeReference used)
        {
            string to = NamespaceOf(used);
            if (to != from && IsProduct(to))
            {
                Edges.TryAdd((from, to), $"{user} uses {used.FullName}");
            }
        }

        private static bool IsProduct(string ns) => ns == "Camdoop" || ns.StartsWith("Camdoop.", StringComparison.Ordinal);

        private static string NamespaceOf(TypeReference type)
        {
            while (type.DeclaringType is { } outer)
            {
                type = outer;
            }
            return type.Namespace;
        }

        // Tarjan's algorithm, iterative over the sorted nodes so the report is stable.
        private static List<List<string>> StronglyConnected(Dictionary<string, List<string>> next)
        {
            var index = new Dictionary<string, int>();
            var low = new Dictionary<string, int>();
            var stack = new Stack<string>();
            var onStack = new HashSet<string>();
            var components = new List<List<string>>();
            void Visit(string v)
            {
                index[v] = low[v] = index.Count;
                stack.Push(v);
                onStack.Add(v);
                foreach (var w in next.GetValueOrDefault(v) ?? [])
                {
                    if (!index.ContainsKey(w))
                    {
                        Visit(w);
                        low[v] = Math.Min(low[v], low[w]);
                    }
                    else if (onStack.Contains(w))
                    {
                        low[v] = Math.Min(low[v], index[w]);
                    }
                }
                if (low[v] == index[v])
                {
                    var component = new List<string>();
                    string w;
                    do
                    {
                        w = stack.Pop();
                        onStack.Remove(w);
                        component.Add(w);
                    }
                    while (w != v);
                    components.Add(component);
                }
            }
            foreach (var v in next.Keys.Order(StringComparer.Ordinal))
            {
                if (!index.ContainsKey(v))
                {
                    Visit(v);
                }
            }
            return components;
        }

        // A shortest cycle through the component's first namespace (breadth first, inside the component).
        private static List<string> CycleWithin(List<string> component, Dictionary<string, List<string>> next)
        {
            var members = component.ToHashSet();
            string start = component.Order(StringComparer.Ordinal).First();
            var parent = new Dictionary<string, string>();
            var queue = new Queue<string>([start]);
            while (queue.Count > 0)
            {
                string v = queue.Dequeue();
                foreach (var w in next[v].Where(members.Contains))
                {
                    if (w == start)
                    {
                        var path = new List<string> { v };
                        while (path[^1] != start)
                        {
                            path.Add(parent[path[^1]]);
                        }
                        path.Reverse();
                        return path;
                    }
                    if (parent.TryAdd(w, v))
                    {
                        queue.Enqueue(w);
                    }
                }
            }
            throw new InvalidOperationException($"no cycle through {start} in its strongly connected component");
        }

        /// <summary>Collects what one type uses into the graph.</summary>
        private readonly struct Uses(NamespaceGraph graph, string from, string user)
        {
            public void Type(TypeReference? type)
            {
                switch (type)
                {
                    case null:
                    case GenericParameter:
                        return;
                    case GenericInstanceType generic:
                        Type(generic.ElementType);
                        foreach (var argument in generic.GenericArguments)
                        {
                            Type(argument);
                        }
                        return;
                    case FunctionPointerType pointer:
                        Type(pointer.ReturnType);
                        foreach (var p in pointer.Parameters)
                        {
                            Type(p.ParameterType);
                        }
                        return;
                    case TypeSpecification specification: // arrays, pointers, by-refs, modifiers, pinned
                        Type(specification.ElementType);
                        return;
                    default:
                        graph.AddEdge(from, user, type);
                        return;
                }
            }

            public void Attributes(ICustomAttributeProvider provider)
            {
                if (!provider.HasCustomAttributes)
                {
                    return;
                }
                foreach (var attribute in provider.CustomAttributes)
                {
                    Type(attribute.AttributeType);
                    foreach (var argument in attribute.ConstructorArguments.Concat(attribute.Fields.Select(f => f.Argument)).Concat(attribute.Properties.Select(p => p.Argument)))
                    {
                        Argument(argument);
                    }
                }
            }

            public void GenericParameters(IGenericParameterProvider provider)
            {
                foreach (var parameter in provider.GenericParameters)
                {
                    Attributes(parameter);
                    foreach (var constraint in parameter.Constraints)
                    {
                        Type(constraint.ConstraintType);
                    }
                }
            }

            public void Method(MethodDefinition method)
            {
                Type(method.ReturnType);
                Attributes(method);
                Attributes(method.MethodReturnType);
                GenericParameters(method);
                foreach (var p in method.Parameters)
                {
                    Type(p.ParameterType);
                    Attributes(p);
                }
                if (!method.HasBody)
                {
                    return;
                }
                var body = method.Body;
                foreach (var variable in body.Variables)
                {
                    Type(variable.VariableType);
                }
                foreach (var handler in body.ExceptionHandlers)
                {
                    Type(handler.CatchType);
                }
                foreach (var instruction in body.Instructions)
                {
                    Operand(instruction.Operand);
                }
            }

            private void Operand(object? operand)
            {
                switch (operand)
                {
                    case TypeReference type:
                        Type(type);
                        break;
                    case GenericInstanceMethod generic:
                        Type(generic.DeclaringType);
                        foreach (var argument in generic.GenericArguments)
                        {
                            Type(argument);
                        }
                        break;
                    case MethodReference method:
                        Type(method.DeclaringType);
                        break;
                    case FieldReference field:
                        Type(field.DeclaringType);
                        break;
                    case CallSite site:
                        Type(site.ReturnType);
                        foreach (var p in site.Parameters)
                        {
                            Type(p.ParameterType);
                        }
                        break;
                }
            }

            private void Argument(CustomAttributeArgument argument)
            {
                switch (argument.Value)
                {
                    case TypeReference type: // typeof(...)
                        Type(type);
                        break;
                    case CustomAttributeArgument boxed:
                        Argument(boxed);
                        break;
                    case CustomAttributeArgument[] array:
                        foreach (var element in array)
                        {
                            Argument(element);
                        }
                        break;
                }
                Type(argument.Type);
            }
        }
    }
}
