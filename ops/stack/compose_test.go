package stack_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// Docker is not available where the tests run, so ops/compose.yaml is checked, not run: it
// parses, every service it names exists, every file it mounts or builds from is in the
// repository, each zuno service runs a subcommand and flags the built zuno has and publishes
// the port it listens on, Prometheus scrapes exactly the servers, and Grafana gets the
// provisioning of ops/grafana and the reader role.

type composeFile struct {
	Services map[string]service `yaml:"services"`
	Secrets  map[string]struct {
		Environment string `yaml:"environment"`
		File        string `yaml:"file"`
	} `yaml:"secrets"`
	Volumes map[string]any `yaml:"volumes"`
}

type service struct {
	Image       string            `yaml:"image"`
	Build       *build            `yaml:"build"`
	Command     []string          `yaml:"command"`
	Environment map[string]string `yaml:"environment"`
	Ports       []string          `yaml:"ports"`
	Volumes     []string          `yaml:"volumes"`
	Secrets     []string          `yaml:"secrets"`
	DependsOn   map[string]struct {
		Condition string `yaml:"condition"`
	} `yaml:"depends_on"`
}

type build struct {
	Context    string `yaml:"context"`
	Dockerfile string `yaml:"dockerfile"`
}

func loadCompose(t *testing.T) composeFile {
	t.Helper()
	b, err := os.ReadFile("../compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var c composeFile
	if err := yaml.Unmarshal(b, &c); err != nil { // yaml.v3 resolves the anchors and merge keys, as Compose does
		t.Fatalf("ops/compose.yaml: %v", err)
	}
	return c
}

func TestComposeServicesAndFiles(t *testing.T) {
	c := loadCompose(t)
	for _, want := range []string{"kurrentdb", "postgres", "zuno-1", "zuno-2", "worker", "prometheus", "grafana"} {
		if _, ok := c.Services[want]; !ok {
			t.Errorf("no service %s", want)
		}
	}
	for name, s := range c.Services {
		if s.Image == "" && s.Build == nil {
			t.Errorf("%s: neither an image nor a build", name)
		}
		for dep := range s.DependsOn {
			if _, ok := c.Services[dep]; !ok {
				t.Errorf("%s depends on %s, which is no service", name, dep)
			}
		}
		for _, sec := range s.Secrets {
			if _, ok := c.Secrets[sec]; !ok {
				t.Errorf("%s uses secret %s, which is not declared", name, sec)
			}
		}
		for _, v := range s.Volumes {
			checkVolume(t, c, name, v)
		}
		for _, p := range s.Ports {
			if !strings.HasPrefix(p, "127.0.0.1:") {
				t.Errorf("%s publishes %s beyond loopback", name, p)
			}
		}
		if b := s.Build; b != nil {
			if _, err := os.Stat(filepath.Join("..", b.Context, b.Dockerfile)); err != nil {
				t.Errorf("%s builds from %s: %v", name, b.Dockerfile, err)
			}
			if _, err := os.Stat(filepath.Join("..", b.Context, "go.mod")); err != nil {
				t.Errorf("%s: build context %s is not the repository: %v", name, b.Context, err)
			}
		}
	}
	for name, sec := range c.Secrets {
		if sec.Environment == "" && sec.File == "" {
			t.Errorf("secret %s has no source", name)
		}
	}
}

// checkVolume: a bind mount's source is a file or directory of the repository; a named volume
// is declared.
func checkVolume(t *testing.T, c composeFile, svc, v string) {
	t.Helper()
	src, _, ok := strings.Cut(v, ":")
	if !ok {
		t.Errorf("%s: volume %q has no target", svc, v)
		return
	}
	if strings.HasPrefix(src, ".") || strings.HasPrefix(src, "/") {
		if _, err := os.Stat(filepath.Join("..", src)); err != nil {
			t.Errorf("%s mounts %s, which is not in the repository: %v", svc, src, err)
		}
		return
	}
	if _, ok := c.Volumes[src]; !ok {
		t.Errorf("%s mounts volume %s, which is not declared", svc, src)
	}
}

// Each zuno service runs a subcommand of the built zuno with flags it has, a server listens
// on the port it publishes and beyond loopback only with a token, and every ZUNO_ variable is
// one docs/config.md or docs/server.md documents.
func TestComposeZunoServicesMatchTheCLI(t *testing.T) {
	c := loadCompose(t)
	zuno := buildZuno(t)
	docs := readDocs(t, "../../docs/config.md", "../../docs/server.md")
	servers := 0
	for name, s := range c.Services {
		if s.Build == nil {
			continue
		}
		if len(s.Command) == 0 {
			t.Errorf("%s: no command", name)
			continue
		}
		help, err := exec.Command(zuno, s.Command[0], "--help").CombinedOutput()
		if err != nil || !strings.Contains(string(help), "zuno "+s.Command[0]) {
			t.Errorf("%s runs zuno %s, which is no subcommand: %v\n%s", name, s.Command[0], err, help)
			continue
		}
		for _, arg := range s.Command[1:] {
			if flag, _, _ := strings.Cut(arg, "="); strings.HasPrefix(flag, "--") && !strings.Contains(string(help), flag+" ") {
				t.Errorf("%s: zuno %s has no flag %s", name, s.Command[0], flag)
			}
		}
		for k := range s.Environment {
			if strings.HasPrefix(k, "ZUNO_") && !strings.Contains(docs, k) && !providerKey.MatchString(k) {
				t.Errorf("%s sets %s, which no doc of the configuration names", name, k)
			}
		}
		if s.Command[0] == "serve" {
			servers++
			checkServer(t, name, s)
		}
	}
	if servers != 2 {
		t.Errorf("%d servers, want 2", servers)
	}
}

// providerKey is a provider's key variable, ZUNO_<PROVIDER>_API_KEY (docs/config.md names the
// pattern, not every provider).
var providerKey = regexp.MustCompile(`^ZUNO_[A-Z]+_API_KEY$`)

func checkServer(t *testing.T, name string, s service) {
	t.Helper()
	i := slices.Index(s.Command, "--listen")
	if i < 0 || i+1 >= len(s.Command) {
		t.Errorf("%s: serve without --listen listens on loopback, out of the other containers' reach", name)
		return
	}
	listen := s.Command[i+1]
	port := listen[strings.LastIndex(listen, ":")+1:]
	if !slices.ContainsFunc(s.Ports, func(p string) bool { return strings.HasSuffix(p, ":"+port) }) {
		t.Errorf("%s listens on %s but publishes %v", name, listen, s.Ports)
	}
	if !strings.HasPrefix(listen, "127.") && s.Environment["ZUNO_SERVER_TOKEN"] == "" {
		t.Errorf("%s listens on %s without ZUNO_SERVER_TOKEN: zuno serve refuses (bind_refused)", name, listen)
	}
}

// Prometheus scrapes every server on the port it listens on, with the token, and loads the
// alert rules it mounts; Grafana's provisioning is mounted where Grafana reads it, its
// dashboards where the provider looks, and its environment fills every variable the
// datasources name.
func TestComposePrometheusAndGrafana(t *testing.T) {
	c := loadCompose(t)
	b, err := os.ReadFile("../prometheus/prometheus.yml")
	if err != nil {
		t.Fatal(err)
	}
	var prom struct {
		RuleFiles     []string `yaml:"rule_files"`
		ScrapeConfigs []struct {
			JobName       string `yaml:"job_name"`
			Authorization struct {
				CredentialsFile string `yaml:"credentials_file"`
			} `yaml:"authorization"`
			StaticConfigs []struct {
				Targets []string `yaml:"targets"`
			} `yaml:"static_configs"`
		} `yaml:"scrape_configs"`
	}
	if err := yaml.Unmarshal(b, &prom); err != nil {
		t.Fatal(err)
	}
	var targets []string
	for _, sc := range prom.ScrapeConfigs {
		if sc.JobName != "zuno" || sc.Authorization.CredentialsFile != "/run/secrets/zuno_token" {
			t.Errorf("scrape job %q reads its token from %q: want job zuno (the dashboards select it) and the compose secret", sc.JobName, sc.Authorization.CredentialsFile)
		}
		for _, st := range sc.StaticConfigs {
			targets = append(targets, st.Targets...)
		}
	}
	var want []string
	for name, s := range c.Services {
		if len(s.Command) > 2 && s.Command[0] == "serve" {
			listen := s.Command[slices.Index(s.Command, "--listen")+1]
			want = append(want, name+listen[strings.LastIndex(listen, ":"):])
		}
	}
	slices.Sort(targets)
	slices.Sort(want)
	if !slices.Equal(targets, want) {
		t.Errorf("Prometheus scrapes %v, the servers are %v", targets, want)
	}
	p := c.Services["prometheus"]
	mounted := func(s service, target string) string {
		for _, v := range s.Volumes {
			if parts := strings.Split(v, ":"); len(parts) >= 2 && parts[1] == target {
				return parts[0]
			}
		}
		return ""
	}
	for _, rf := range append(prom.RuleFiles, "/etc/prometheus/prometheus.yml") {
		if mounted(p, rf) == "" {
			t.Errorf("Prometheus reads %s, which compose does not mount", rf)
		}
	}
	g := c.Services["grafana"]
	if src := mounted(g, "/etc/grafana/provisioning"); src != "./grafana/provisioning" {
		t.Errorf("Grafana's provisioning comes from %q, want ./grafana/provisioning", src)
	}
	provider, err := os.ReadFile("../grafana/provisioning/dashboards/zuno.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if path := regexp.MustCompile(`path: (\S+)`).FindSubmatch(provider); path == nil || mounted(g, string(path[1])) != "./grafana/dashboards" {
		t.Errorf("the dashboard provider reads %s, where compose mounts no ./grafana/dashboards", path)
	}
	ds, err := os.ReadFile("../grafana/provisioning/datasources/zuno.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`\$\{(\w+)\}`).FindAllStringSubmatch(string(ds), -1) {
		if _, ok := g.Environment[m[1]]; !ok {
			t.Errorf("the datasources read ${%s}, which Grafana's environment does not set", m[1])
		}
	}
	if u := g.Environment["ZUNO_READER_USER"]; strings.Contains(u, "zuno:") || u == "zuno" {
		t.Errorf("Grafana reads the read models as %q, the owner: it must be the reader role", u)
	}
}

func buildZuno(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "zuno")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/zuno-run/zuno/cmd/zuno").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func readDocs(t *testing.T, paths ...string) string {
	t.Helper()
	var b strings.Builder
	for _, p := range paths {
		d, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(fmt.Errorf("%s: %w", p, err))
		}
		b.Write(d)
	}
	return b.String()
}
