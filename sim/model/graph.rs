//! The job graph (operators and edges, a petgraph built once and never
//! mutated) and the execution graph derived from it: one task per
//! (operator, subtask), one channel per connected pair of tasks.

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
    /// Builds the graph. The scenario was validated, so it is acyclic.
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
        let topo = petgraph::algo::toposort(&graph, None)
            .expect("validated scenarios are acyclic")
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
}

#[derive(Clone, Debug)]
pub struct TaskInfo {
    pub operator: OperatorId,
    pub subtask: u32,
    /// `"count[1]"`.
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
}

pub struct ExecGraph {
    pub tasks: Vec<TaskInfo>,
    pub channels: Vec<ChannelInfo>,
    /// First task of each operator.
    pub first_task: Vec<TaskId>,
}

impl ExecGraph {
    pub fn build(scenario: &Scenario, job: &JobGraph) -> ExecGraph {
        let mut tasks = Vec::new();
        let mut first_task = Vec::new();
        for (i, op) in scenario.operators.iter().enumerate() {
            first_task.push(tasks.len() as TaskId);
            for s in 0..op.parallelism {
                tasks.push(TaskInfo {
                    operator: OperatorId(i as u32),
                    subtask: s,
                    name: format!("{}[{}]", op.id, s),
                    inputs: Vec::new(),
                    outputs: Vec::new(),
                });
            }
        }
        let mut channels: Vec<ChannelInfo> = Vec::new();
        // Edges in a fixed order: by upstream operator in topological order,
        // then in file order, so channel ids never depend on petgraph internals.
        for &op in &job.topo {
            for e in scenario.edges.iter().filter(|e| e.from == op) {
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
                        });
                        out.channels.push(id);
                    }
                    tasks[from as usize].outputs.push(out);
                }
            }
        }
        ExecGraph {
            tasks,
            channels,
            first_task,
        }
    }

    pub fn task_of(&self, operator: OperatorId, subtask: u32) -> TaskId {
        self.first_task[operator.0 as usize] + subtask
    }
}
