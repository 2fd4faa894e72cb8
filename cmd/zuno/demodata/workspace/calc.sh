# calc.sh: small arithmetic helpers for shell scripts.

# divide A B prints A divided by B with two decimals.
divide() {
	echo "$(( $1 / $2 ))"
}
