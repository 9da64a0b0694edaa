//! The job graph (operators and edges, a petgraph built once and never
//! mutated) and the execution graph derived from it: operators chained into
//! tasks, one task per (chain, subtask), one channel per connected pair of
//! tasks.

use crate::scenario::{OperatorId, Partitioning, Scenario};
use petgraph::graph::{DiGraph, NodeIndex};

/// Dense task index; tasks of one operator are contiguous.
pub type TaskId = u32;
/// Dense channel index.
pub type ChannelId = u32;

/// The logical job: nodes are operators (node index = operator index).
pub struct JobGraph {
    pub graph: DiGraph<OperatorId, Partitioning>,
    /// Operators in topological order.
    pub topo: Vec<OperatorId>,
}

impl JobGraph {
    /// Builds the graph. The scenario was validated, so it is acyclic
    /// without its feedback edges; `topo` orders the operators by the
    /// other edges.
    pub fn build(scenario: &Scenario) -> JobGraph {
        let mut graph = DiGraph::new();
        for i in 0..scenario.operators.len() {
            graph.add_node(OperatorId(i as u32));
        }
        for e in &scenario.edges {
            graph.add_edge(
                NodeIndex::new(e.from.0 as usize),
                NodeIndex::new(e.to.0 as usize),
                e.partitioning,
            );
        }
        let forward = graph.filter_map(
            |_, &op| Some(op),
            |e, &p| (!scenario.edges[e.index()].feedback).then_some(p),
        );
        let topo = petgraph::algo::toposort(&forward, None)
            .expect("validated scenarios are acyclic but for feedback edges")
            .into_iter()
            .map(|n| graph[n])
            .collect();
        JobGraph { graph, topo }
    }
}

/// One output edge of a task: how records are routed to the downstream
/// operator's subtasks.
#[derive(Clone, Debug)]
pub struct OutputEdge {
    pub partitioning: Partitioning,
    /// Channel to each downstream subtask (for `forward`: exactly one).
    pub channels: Vec<ChannelId>,
    /// The chain member (index into `TaskInfo::chain`) whose records take
    /// this edge.
    pub member: u32,
    /// A late-data side output (`side_output = "late"`): it carries the
    /// records the member emits with `Context::emit_late`, and the
    /// watermarks, not its records.
    pub late: bool,
}

/// One task: a chain of operators (Flink's `OperatorChain`) at one subtask
/// index. Records pass between chained operators by a call, never through
/// a channel.
#[derive(Clone, Debug)]
pub struct TaskInfo {
    /// The chain's head: the operator that reads the task's input channels.
    pub operator: OperatorId,
    pub subtask: u32,
    /// The chained operators, head first, each after the one that feeds it.
    pub chain: Vec<OperatorId>,
    /// Per member: the members its records go to inside the task.
    pub chained: Vec<Vec<u32>>,
    /// `"count[1]"`; a chain is `"src->map[1]"`.
    pub name: String,
    pub inputs: Vec<ChannelId>,
    pub outputs: Vec<OutputEdge>,
}

#[derive(Clone, Debug)]
pub struct ChannelInfo {
    pub from: TaskId,
    pub to: TaskId,
    /// Position of this channel in the receiver's `inputs`.
    pub input_index: u32,
    /// The operators of the edge it carries (the sender's may be any
    /// member of its chain; the receiver's is its head).
    pub from_op: OperatorId,
    pub to_op: OperatorId,
}

pub struct ExecGraph {
    pub tasks: Vec<TaskInfo>,
    pub channels: Vec<ChannelInfo>,
    /// Per operator: the first task of its chain (the tasks of one chain are
    /// contiguous, by subtask).
    pub first_task: Vec<TaskId>,
    /// Per operator: its index in its chain (`TaskInfo::chain`).
    pub member: Vec<u32>,
    /// Per operator: the index of its subtask 0 among all operator
    /// subtasks, in file order (the task index were nothing chained; each
    /// operator subtask's schedule is logged under it).
    pub instance: Vec<u32>,
}

impl ExecGraph {
    /// The execution graph with the scenario's chaining
    /// ([`crate::scenario::ScenarioData::chained_edges`]).
    pub fn build(scenario: &Scenario, job: &JobGraph) -> ExecGraph {
        ExecGraph::with_chains(scenario, job, &scenario.chained_edges())
    }

    /// One task per operator subtask: every edge a channel.
    pub fn unchained(scenario: &Scenario, job: &JobGraph) -> ExecGraph {
        ExecGraph::with_chains(scenario, job, &vec![false; scenario.edges.len()])
    }

    fn with_chains(scenario: &Scenario, job: &JobGraph, chained: &[bool]) -> ExecGraph {
        let n = scenario.operators.len();
        // Indexed once, so that building the graph stays linear in its
        // operators and edges: each operator's edges in file order, and
        // whether a chained edge leads into it.
        let mut out_edges: Vec<Vec<usize>> = vec![Vec::new(); n];
        let mut in_chain = vec![false; n];
        for (i, e) in scenario.edges.iter().enumerate() {
            out_edges[e.from.0 as usize].push(i);
            in_chain[e.to.0 as usize] |= chained[i];
        }
        let (mut tasks, first_task, member) = chain_tasks(scenario, &out_edges, &in_chain, chained);
        let mut channels: Vec<ChannelInfo> = Vec::new();
        // Edges in a fixed order: by upstream operator in topological order,
        // then in file order, so channel ids never depend on petgraph internals.
        for &op in &job.topo {
            let unchained = out_edges[op.0 as usize].iter().filter(|&&e| !chained[e]);
            for e in unchained.map(|&e| &scenario.edges[e]) {
                let up = scenario.op(e.from).parallelism;
                let down = scenario.op(e.to).parallelism;
                for s in 0..up {
                    let from = first_task[e.from.0 as usize] + s;
                    let targets: Vec<u32> = match e.partitioning {
                        Partitioning::Forward => vec![s],
                        _ => (0..down).collect(),
                    };
                    let mut out = OutputEdge {
                        partitioning: e.partitioning,
                        channels: Vec::with_capacity(targets.len()),
                        member: member[e.from.0 as usize],
                        late: e.side_output_late,
                    };
                    for d in targets {
                        let to = first_task[e.to.0 as usize] + d;
                        let id = channels.len() as ChannelId;
                        let input_index = tasks[to as usize].inputs.len() as u32;
                        tasks[to as usize].inputs.push(id);
                        channels.push(ChannelInfo {
                            from,
                            to,
                            input_index,
                            from_op: e.from,
                            to_op: e.to,
                        });
                        out.channels.push(id);
                    }
                    tasks[from as usize].outputs.push(out);
                }
            }
        }
        let mut instance = Vec::with_capacity(n);
        let mut next = 0;
        for op in &scenario.operators {
            instance.push(next);
            next += op.parallelism;
        }
        ExecGraph {
            tasks,
            channels,
            first_task,
            member,
            instance,
        }
    }

    /// The task that runs subtask `subtask` of `operator`.
    pub fn task_of(&self, operator: OperatorId, subtask: u32) -> TaskId {
        self.first_task[operator.0 as usize] + subtask
    }

    /// The operator subtasks, chained or not.
    pub fn instances(&self) -> usize {
        self.tasks.iter().map(|t| t.chain.len()).sum()
    }

    /// The tasks running more than one operator.
    pub fn chained_tasks(&self) -> usize {
        self.tasks.iter().filter(|t| t.chain.len() > 1).count()
    }
}

/// The tasks of a job: each chain, from its head in file order, members in
/// preorder (edges in file order), so each comes after the one that feeds
/// it; one task per subtask of its head. Also, per operator, its chain's
/// first task and its index in the chain.
fn chain_tasks(
    scenario: &Scenario,
    out_edges: &[Vec<usize>],
    in_chain: &[bool],
    chained: &[bool],
) -> (Vec<TaskInfo>, Vec<TaskId>, Vec<u32>) {
    let n = scenario.operators.len();
    let mut tasks = Vec::new();
    let mut first_task = vec![0; n];
    let mut member = vec![0; n];
    for head in (0..n).filter(|&op| !in_chain[op]) {
        let mut chain: Vec<OperatorId> = Vec::new();
        let mut links: Vec<Vec<u32>> = Vec::new();
        let mut stack = vec![(head, None::<usize>)];
        while let Some((op, parent)) = stack.pop() {
            let index = chain.len();
            chain.push(OperatorId(op as u32));
            links.push(Vec::new());
            if let Some(p) = parent {
                links[p].push(index as u32);
            }
            member[op] = index as u32;
            let next = out_edges[op].iter().filter(|&&e| chained[e]);
            for &e in next.rev() {
                stack.push((scenario.edges[e].to.0 as usize, Some(index)));
            }
        }
        let first = tasks.len() as TaskId;
        for &op in &chain {
            first_task[op.0 as usize] = first;
        }
        let names: Vec<&str> = chain.iter().map(|&o| scenario.op(o).id.as_str()).collect();
        let name = names.join("->");
        for s in 0..scenario.operators[head].parallelism {
            tasks.push(TaskInfo {
                operator: OperatorId(head as u32),
                subtask: s,
                chain: chain.clone(),
                chained: links.clone(),
                name: format!("{name}[{s}]"),
                inputs: Vec::new(),
                outputs: Vec::new(),
            });
        }
    }
    (tasks, first_task, member)
}
