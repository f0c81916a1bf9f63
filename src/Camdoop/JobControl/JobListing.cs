using Camdoop.JobControl.Wire;
using Camdoop.Runtime.Topology;

namespace Camdoop.JobControl;

/// <summary>The jobs on the cube, newest first, and the servers that did not answer in time (whose jobs are missing).</summary>
public sealed record JobListing(IReadOnlyList<JobSnapshot> Jobs, IReadOnlyList<Coordinate> Unanswered);
