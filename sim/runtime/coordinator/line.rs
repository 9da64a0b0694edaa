//! Recovery lines of the uncoordinated families: the maximum consistent set
//! of per-task checkpoints (Bhargava and Lian, 1988; Wang, 1997; CheckMate's
//! rollback-dependency graph), and the usefulness of a checkpoint (Netzer
//! and Xu: it belongs to some consistent global checkpoint). Sans-IO: cuts
//! in, positions out.
//!
//! A set of checkpoints, one per task, is **consistent** when no channel
//! has an orphan: a record its receiver's checkpoint had read but its
//! sender's checkpoint had not sent. Records sent but not read are in
//! transit; the sender's log replays them.

use super::Cut;
use crate::model::{ChannelId, TaskId};

/// Records sent (`outputs`) or read (`inputs`) on `ch` at a cut; 0 for a
/// channel the cut does not name (a task's initial state).
pub fn count(list: &[(ChannelId, u64)], ch: ChannelId) -> u64 {
    list.iter().find(|(c, _)| *c == ch).map_or(0, |(_, n)| *n)
}

/// The maximum consistent recovery line. `candidates[t]` are task `t`'s
/// checkpoints, newest first, ending with one known to be consistent with
/// every other task's last candidate (its checkpoint in the previous line,
/// or its initial state as an empty `Cut`); `channels[ch]` is
/// `(sender, receiver)`. Returns each task's position in its candidates and
/// how many checkpoints were rolled back over (CheckMate's "useless"
/// count): while some channel has an orphan, its receiver goes back one
/// checkpoint. `ignore_orphans` (mutant `line-ignores-orphans`) keeps every
/// task's newest.
pub fn max_consistent(
    candidates: &[Vec<&Cut>],
    channels: &[(TaskId, TaskId)],
    ignore_orphans: bool,
) -> (Vec<usize>, u64) {
    let mut pos = vec![0usize; candidates.len()];
    let mut rolled = 0;
    if ignore_orphans {
        return (pos, 0);
    }
    loop {
        let mut changed = false;
        for (ch, &(s, r)) in channels.iter().enumerate() {
            let ch = ch as ChannelId;
            let (s, r) = (s as usize, r as usize);
            let sent = count(&candidates[s][pos[s]].outputs, ch);
            while pos[r] + 1 < candidates[r].len()
                && count(&candidates[r][pos[r]].inputs, ch) > sent
            {
                pos[r] += 1;
                rolled += 1;
                changed = true;
            }
        }
        if !changed {
            return (pos, rolled);
        }
    }
}

/// The channels with an orphan in a line (one cut per task): `(channel,
/// read, sent)`.
pub fn orphans(line: &[&Cut], channels: &[(TaskId, TaskId)]) -> Vec<(ChannelId, u64, u64)> {
    let mut found = Vec::new();
    for (ch, &(s, r)) in channels.iter().enumerate() {
        let ch = ch as ChannelId;
        let sent = count(&line[s as usize].outputs, ch);
        let read = count(&line[r as usize].inputs, ch);
        if read > sent {
            found.push((ch, read, sent));
        }
    }
    found
}

/// Whether checkpoint `x` of task `i` (an index into `history[i]`, each
/// task's checkpoints oldest first, each ending with its state at the end
/// of the run, which is consistent with everything) belongs to some
/// consistent global checkpoint: the smallest one holding it is built by
/// moving the other tasks forward from their first entry until no channel
/// has an orphan; it fails when task `i` itself would have to move.
pub fn useful(history: &[Vec<&Cut>], channels: &[(TaskId, TaskId)], i: usize, x: usize) -> bool {
    let mut pos = vec![0usize; history.len()];
    pos[i] = x;
    loop {
        let mut changed = false;
        for (ch, &(s, r)) in channels.iter().enumerate() {
            let ch = ch as ChannelId;
            let (s, r) = (s as usize, r as usize);
            let read = count(&history[r][pos[r]].inputs, ch);
            while count(&history[s][pos[s]].outputs, ch) < read {
                if s == i || pos[s] + 1 >= history[s].len() {
                    return false;
                }
                pos[s] += 1;
                changed = true;
            }
        }
        if !changed {
            return true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cut(inputs: &[(ChannelId, u64)], outputs: &[(ChannelId, u64)]) -> Cut {
        Cut {
            inputs: inputs.to_vec(),
            outputs: outputs.to_vec(),
        }
    }

    /// a -> b -> c, channels 0 (a -> b) and 1 (b -> c).
    const CHAIN: [(TaskId, TaskId); 2] = [(0, 1), (1, 2)];

    #[test]
    fn an_orphan_rolls_its_receiver_back_and_the_rollback_travels_down() {
        let init = Cut::default();
        // a's newest checkpoint sent 10; b's newest read 12 (an orphan),
        // its previous read 8 and sent 5; c's newest read 7 (an orphan of
        // b's previous), its previous read 4.
        let a = [cut(&[], &[(0, 10)])];
        let b = [cut(&[(0, 12)], &[(1, 9)]), cut(&[(0, 8)], &[(1, 5)])];
        let c = [cut(&[(1, 7)], &[]), cut(&[(1, 4)], &[])];
        let candidates = vec![
            vec![&a[0], &init],
            vec![&b[0], &b[1], &init],
            vec![&c[0], &c[1], &init],
        ];
        let (pos, rolled) = max_consistent(&candidates, &CHAIN, false);
        assert_eq!((pos, rolled), (vec![0, 1, 1], 2));
        let line: Vec<&Cut> = vec![&a[0], &b[1], &c[1]];
        assert!(orphans(&line, &CHAIN).is_empty());
        // The mutant keeps the newest: two orphans.
        let (pos, rolled) = max_consistent(&candidates, &CHAIN, true);
        assert_eq!((pos, rolled), (vec![0, 0, 0], 0));
        let line: Vec<&Cut> = vec![&a[0], &b[0], &c[0]];
        assert_eq!(orphans(&line, &CHAIN), vec![(0, 12, 10)]);
    }

    #[test]
    fn a_line_never_goes_below_the_last_candidate() {
        let init = Cut::default();
        let b = cut(&[(0, 3)], &[(1, 3)]);
        let candidates = vec![vec![&init], vec![&b, &init], vec![&init]];
        let (pos, rolled) = max_consistent(&candidates, &CHAIN, false);
        assert_eq!((pos, rolled), (vec![0, 1, 0], 1));
    }

    #[test]
    fn a_checkpoint_on_a_z_cycle_is_useless() {
        // Two tasks exchanging records: 0 -> 1 on channel 0, 1 -> 0 on
        // channel 1. Task 0's checkpoint x read 1 record from task 1 which
        // task 1 sent after its only checkpoint, and that checkpoint read a
        // record task 0 sent after x: no consistent line holds x.
        let channels = [(0, 1), (1, 0)];
        let init = Cut::default();
        let x = cut(&[(1, 1)], &[(0, 0)]);
        let end0 = cut(&[(1, 1)], &[(0, 1)]);
        let y = cut(&[(0, 1)], &[(1, 0)]);
        let end1 = cut(&[(0, 1)], &[(1, 1)]);
        let history = vec![vec![&init, &x, &end0], vec![&init, &y, &end1]];
        assert!(!useful(&history, &channels, 0, 1));
        assert!(!useful(&history, &channels, 1, 1), "y is on the same cycle");
        assert!(useful(&history, &channels, 0, 0));
        assert!(useful(&history, &channels, 0, 2));
        // Had task 1's record still been in transit at the end, both
        // would be useful.
        let x = cut(&[(1, 0)], &[(0, 0)]);
        let end0 = cut(&[(1, 0)], &[(0, 1)]);
        let history = vec![vec![&init, &x, &end0], vec![&init, &y, &end1]];
        assert!(useful(&history, &channels, 0, 1));
        assert!(useful(&history, &channels, 1, 1));
    }
}
