// Package k8s holds the Kubernetes manifests of a VoiceBench run split
// across machines (see docs/voicebench.md); its test keeps them valid.
package k8s

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// render does what the documented envsubst '$SHARDS $PARALLELISM $IMAGE'
// does: replaces those parameters and nothing else.
func render(t *testing.T, file string, params map[string]string) []byte {
	t.Helper()
	raw, err := os.ReadFile(file)
	require.NoError(t, err)
	out := regexp.MustCompile(`\$\{([A-Z_]+)\}`).ReplaceAllStringFunc(string(raw), func(m string) string {
		v, ok := params[m[2:len(m)-1]]
		require.True(t, ok, "%s: parameter %s is not documented", file, m)
		return v
	})
	return []byte(out)
}

// job decodes a manifest strictly into the real API type: a misspelt or
// misplaced field is an error, as kubectl apply --validate=strict makes it.
func job(t *testing.T, file string, params map[string]string) batchv1.Job {
	t.Helper()
	var j batchv1.Job
	require.NoError(t, yaml.UnmarshalStrict(render(t, file, params), &j), file)
	assert.Equal(t, "batch/v1", j.APIVersion)
	assert.Equal(t, "Job", j.Kind)
	assert.Equal(t, corev1.RestartPolicyNever, j.Spec.Template.Spec.RestartPolicy)
	c := j.Spec.Template.Spec.Containers
	require.Len(t, c, 1)
	assert.Equal(t, params["IMAGE"], c[0].Image)
	volumes := map[string]bool{}
	for _, v := range j.Spec.Template.Spec.Volumes {
		volumes[v.Name] = true
	}
	for _, m := range c[0].VolumeMounts {
		assert.True(t, volumes[m.Name], "%s: mount %s has no volume", file, m.Name)
	}
	return j
}

// runScript runs a container's shell script with a stand-in voice-agent
// that records each call's arguments, one call a line.
func runScript(t *testing.T, c corev1.Container, env ...string) [][]string {
	t.Helper()
	require.Equal(t, []string{"/bin/sh", "-c"}, c.Command)
	require.Len(t, c.Args, 1)
	dir := t.TempDir()
	calls := filepath.Join(dir, "calls")
	stub := "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\t' \"$a\"; done >> " + calls + "\necho >> " + calls + "\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "voice-agent"), []byte(stub), 0o755))
	cmd := exec.Command("/bin/sh", "-c", c.Args[0])
	cmd.Env = append([]string{"PATH=" + dir + ":/usr/bin:/bin"}, env...)
	for _, e := range c.Env {
		cmd.Env = append(cmd.Env, e.Name+"="+e.Value)
	}
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	raw, err := os.ReadFile(calls)
	require.NoError(t, err)
	var got [][]string
	for _, line := range strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n") {
		got = append(got, strings.Split(strings.TrimSuffix(line, "\t"), "\t"))
	}
	return got
}

// The shards' Job is Indexed, as many completions as shards, and pod k
// answers shard k/N of every subset into its own directory; the merge Job
// joins exactly those directories and scores them.
func TestManifestsWireTheShards(t *testing.T) {
	params := map[string]string{"SHARDS": "8", "PARALLELISM": "3", "IMAGE": "registry.example/voice-agent:v1"}
	shards := job(t, "voicebench-job.yaml", params)
	require.NotNil(t, shards.Spec.CompletionMode)
	assert.Equal(t, batchv1.IndexedCompletion, *shards.Spec.CompletionMode)
	assert.Equal(t, int32(8), *shards.Spec.Completions)
	assert.Equal(t, int32(3), *shards.Spec.Parallelism)
	c := shards.Spec.Template.Spec.Containers[0]
	mem := c.Resources.Requests[corev1.ResourceMemory]
	assert.GreaterOrEqual(t, mem.Value(), int64(1600<<20), "the models' weights and the harness fit the request")

	calls := runScript(t, c, "JOB_COMPLETION_INDEX=5")
	var subsets []string
	for _, call := range calls {
		args := strings.Join(call, " ")
		assert.Contains(t, args, "voicebench run --data /data")
		assert.Contains(t, args, "--shard 5/8", "the pod's index is its shard")
		assert.Contains(t, args, "--out /results/shard-5")
		i := slices.Index(call, "--subset")
		require.Positive(t, i)
		subsets = append(subsets, call[i+1])
	}
	assert.Len(t, subsets, 9, "every subset the harness scores")
	checkFlags(t, calls[0])

	merge := job(t, "voicebench-merge-job.yaml", map[string]string{"SHARDS": "8", "IMAGE": params["IMAGE"]})
	calls = runScript(t, merge.Spec.Template.Spec.Containers[0])
	require.Len(t, calls, 2)
	want := []string{"voicebench", "merge", "--out", "/results/merged"}
	for k := range 8 {
		want = append(want, "/results/shard-"+strconv.Itoa(k))
	}
	assert.Equal(t, want, calls[0], "every shard the Job wrote, once")
	assert.Equal(t, []string{"voicebench", "score", "--results", "/results/merged"}, calls[1])
	checkFlags(t, calls[0][:4])
}

// agent builds the real CLI once.
var agent = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "voice-agent-k8s")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "voice-agent")
	out, err := exec.Command("go", "build", "-o", bin, "../../cmd/voice-agent").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%w: %s", err, out)
	}
	return bin, nil
})

// checkFlags has the real CLI parse a call's flags (cobra refuses an
// unknown flag even with --help), so a renamed flag fails here.
func checkFlags(t *testing.T, call []string) {
	t.Helper()
	bin, err := agent()
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(filepath.Dir(bin)) })
	var stderr bytes.Buffer
	cmd := exec.Command(bin, append(call, "--help")...)
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Run(), "%v: %s", call, stderr.String())
}

// A typo in a manifest fails to decode, rather than being dropped.
func TestStrictDecodingCatchesATypo(t *testing.T) {
	raw := render(t, "voicebench-job.yaml", map[string]string{"SHARDS": "2", "PARALLELISM": "2", "IMAGE": "x"})
	typo := bytes.Replace(raw, []byte("completionMode:"), []byte("completionMod:"), 1)
	var j batchv1.Job
	assert.ErrorContains(t, yaml.UnmarshalStrict(typo, &j), "completionMod")
}
