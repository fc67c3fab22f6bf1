//! The one sink over a store that may drop: trials go to the spool while the store is out of
//! reach, and a push of the spool that fails loses nothing and says how to send it.

use super::*;
use schedlab_core::records::TrialStatus;
use schedlab_store::Location;

fn plan() -> Plan {
    schedlab_spec::plan::build(&schedlab_spec::Spec::default_quick(), 5).unwrap()
}

fn spooled_trials(spool: &std::path::Path) -> i64 {
    Store::open_read(spool).unwrap().trial_count().unwrap()
}

#[test]
fn a_failed_push_of_the_spool_keeps_its_trials_and_says_how_to_send_them() {
    let dir = tempfile::tempdir().unwrap();
    let (db, spool) = (dir.path().join("server.db"), dir.path().join("spool.db"));
    let location = Location::File(db.clone());
    let remote = Remote::connect(&location, &spool, false).unwrap();
    let mut sink = StoreSink::new(remote);
    let plan = plan();
    let run_id = sink.create_run(&plan, "schedlab run", "{}").unwrap();
    // The store goes away: the trial goes to the spool.
    sink.remote.lost(&"gone for the test");
    let (outcome, meta) = (
        TrialOutcome::not_run(TrialStatus::Skipped, "a test"),
        TrialMeta::default(),
    );
    let id = sink
        .insert_trial(run_id, &plan.trials[0], &outcome, &meta)
        .unwrap();
    assert!(id > 0);
    assert_eq!(sink.remote.spooled, 1);
    assert_eq!(spooled_trials(&spool), 1);
    assert_eq!(Store::open_read(&db).unwrap().trial_count().unwrap(), 0);
    // It comes back read only, so the push fails: the spool keeps its trial.
    sink.remote.back_for_test(Store::open_read(&db).unwrap());
    let e = sink.remote.flush().unwrap_err();
    let said = e.to_string();
    assert!(matches!(e, RemoteError::Push { .. }), "{said}");
    assert!(
        said.contains(&spool.display().to_string()) && said.contains("schedlab push --spool"),
        "the message says where the trials are and how to send them: {said}"
    );
    assert_eq!(spooled_trials(&spool), 1, "nothing left the spool");
    assert_eq!(sink.remote.spooled, 1);
    // Back for real: the push empties the spool into the store.
    sink.remote.back_for_test(Store::open(&db).unwrap());
    sink.remote.flush().unwrap();
    assert_eq!(spooled_trials(&spool), 0);
    assert_eq!(Store::open_read(&db).unwrap().trial_count().unwrap(), 1);
}

#[test]
fn a_lost_server_is_said_once_per_reason_not_once_per_retry() {
    let dir = tempfile::tempdir().unwrap();
    let (db, spool) = (dir.path().join("server.db"), dir.path().join("spool.db"));
    let mut remote = Remote::connect(&Location::File(db), &spool, false).unwrap();
    assert!(remote.lost(&"connection refused"), "the first loss is said");
    assert!(
        !remote.lost(&"connection refused"),
        "a retry failing the same way is not"
    );
    assert!(
        remote.lost(&"read-only transaction"),
        "a new reason is said"
    );
    assert!(!remote.lost(&"read-only transaction"));
    assert!(remote.current().is_none());
}

#[test]
fn a_local_store_is_never_out_of_reach_and_has_no_spool() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("local.db");
    let location = Location::File(db.clone());
    let mut sink = StoreSink::local(&location, Store::open(&location).unwrap());
    let plan = plan();
    let run_id = sink.create_run(&plan, "schedlab run", "{}").unwrap();
    let outcome = TrialOutcome::not_run(TrialStatus::Skipped, "a test");
    let id = sink
        .insert_trial(run_id, &plan.trials[0], &outcome, &TrialMeta::default())
        .unwrap();
    sink.finish_run(run_id, schedlab_core::records::RunStatus::Done)
        .unwrap();
    assert!(id > 0);
    assert_eq!(sink.remote.spooled, 0);
    assert!(matches!(sink.remote.spool(), Err(RemoteError::Internal(_))));
    let store = sink.store().unwrap();
    assert_eq!(store.trial_count().unwrap(), 1);
    assert_eq!(
        schedlab_store::query::run_info(store, run_id)
            .unwrap()
            .status,
        schedlab_core::records::RunStatus::Done
    );
}
