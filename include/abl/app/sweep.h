// The sweep phase as named steps: check the run folder's inputs against the model, resolve the
// settings, hash the configuration a resumed sweep must share, open trials.h5 (rank 0, with the
// history of a resumed sweep), then batch by batch: propose (rank 0 asks the Proposer and
// broadcasts), evaluate (every rank), store (rank 0), report, stop on a signal.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "abl/ablation/proposer.h"
#include "abl/app/driver.h"
#include "abl/io/driver_files.h"

namespace abl {
class Progress;
}

namespace abl::app {

class TrialEvaluator;
struct BatchResult;

// The proposer of the settings' search (grid, sobol or tpe) over the default space for the model.
std::unique_ptr<ablation::Proposer> make_proposer(const SweepSettings& set, int64_t num_layers);

class Sweep {
 public:
  explicit Sweep(Session& ses);
  ~Sweep();
  Sweep(const Sweep&) = delete;
  Sweep& operator=(const Sweep&) = delete;

  // Collective over the world.
  SweepEnd run();

 private:
  // Before any heavy work: directions.h5 and baseline.h5 exist and belong to this model, the
  // response prefix and --max-response-length agree with the baseline, the markers load.
  void check_inputs();
  void encode_prompts();     // the baseline's KL and evaluation prompts
  void choose_batch_size();  // --trials-per-batch, or auto: fill every rank's passes
  void hash_config();        // what a resumed sweep must share (config hash)
  void open_trials_file();   // rank 0 opens trials.h5 and reads the history; broadcast header
  SweepEnd evaluate_batches(TrialEvaluator& eval);
  ablation::BatchRequest next_batch() const;
  std::vector<ablation::TrialParams> propose(const ablation::BatchRequest& batch);  // rank 0, broadcast
  void store_batch(const ablation::BatchRequest& batch, const std::vector<ablation::TrialParams>& trials,
                   const BatchResult& r, double secs);
  void report_progress(Progress& progress, const ablation::BatchRequest& batch);
  bool stop_requested();  // a signal on any rank
  void finish(double secs);

  Session& ses_;
  SweepSettings set_;
  std::string dpath_, bpath_, tpath_;
  io::schema::DirectionsData dirs_;
  std::unique_ptr<io::schema::BaselineReader> base_;
  std::unique_ptr<text::RefusalMarkers> markers_;
  int64_t max_new_ = 0;
  std::vector<std::string> kl_texts_, eval_texts_;
  std::vector<std::vector<int32_t>> kl_ids_, eval_ids_;
  std::vector<float> base_logprobs_;
  int64_t n_eval_ = 0;
  int64_t per_batch_ = 0;
  std::string cfg_json_, hash_;
  std::unique_ptr<ablation::Proposer> proposer_;
  std::unique_ptr<io::schema::TrialsStore> store_;  // rank 0
  std::vector<ablation::TrialParams> done_;         // rank 0: the history
  std::vector<ablation::Scores> scores_;
  double elapsed_before_ = 0;
  int64_t n_done_ = 0, n_trials_ = 0, first_new_ = 0;
  int64_t decode_tokens_ = 0, prompt_tokens_ = 0;
};

}  // namespace abl::app
